package io.cerulean.compat;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.core.http.rest.Response;
import com.azure.core.util.BinaryData;
import com.azure.core.util.Context;
import com.azure.storage.blob.BlobClient;
import com.azure.storage.blob.BlobClientBuilder;
import com.azure.storage.blob.BlobContainerClient;
import com.azure.storage.blob.BlobServiceClient;
import com.azure.storage.blob.BlobServiceClientBuilder;
import com.azure.storage.blob.batch.BlobBatch;
import com.azure.storage.blob.batch.BlobBatchClient;
import com.azure.storage.blob.batch.BlobBatchClientBuilder;
import com.azure.storage.blob.batch.BlobBatchStorageException;
import com.azure.storage.blob.models.BlobContainerItem;
import com.azure.storage.blob.models.BlobErrorCode;
import com.azure.storage.blob.models.BlobProperties;
import com.azure.storage.blob.models.BlobRequestConditions;
import com.azure.storage.blob.models.BlobStorageException;
import com.azure.storage.blob.models.LeaseStateType;
import com.azure.storage.blob.options.BlobParallelUploadOptions;
import com.azure.storage.blob.sas.BlobSasPermission;
import com.azure.storage.blob.sas.BlobServiceSasSignatureValues;
import com.azure.storage.blob.specialized.BlobLeaseClient;
import com.azure.storage.blob.specialized.BlobLeaseClientBuilder;
import com.azure.storage.common.sas.AccountSasPermission;
import com.azure.storage.common.sas.AccountSasResourceType;
import com.azure.storage.common.sas.AccountSasService;
import com.azure.storage.common.sas.AccountSasSignatureValues;
import java.io.ByteArrayOutputStream;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** azure-storage-blob and azure-storage-blob-batch against Cerulean's Blob service. */
class BlobTest {
    static BlobServiceClient service;
    static BlobContainerClient container;

    @BeforeAll
    static void setUp() {
        service = new BlobServiceClientBuilder().endpoint(Env.endpoint("blob"))
            .credential(Env.CRED).retryOptions(Env.NO_RETRY).buildClient();
        container = service.createBlobContainer(Env.name("java"));
    }

    static BlobStorageException blobError(org.junit.jupiter.api.function.Executable e) {
        return assertThrows(BlobStorageException.class, e);
    }

    @Test
    void uploadAndDownload() {
        byte[] data = new byte[3 * 1024 * 1024 + 17];
        new Random(1).nextBytes(data);
        BlobClient blob = container.getBlobClient("dir/big.bin");
        // A block size below the data size makes the SDK stage blocks and
        // commit a block list instead of one Put Blob.
        blob.uploadWithResponse(new BlobParallelUploadOptions(BinaryData.fromBytes(data))
            .setParallelTransferOptions(new com.azure.storage.blob.models.ParallelTransferOptions()
                .setBlockSizeLong(1024L * 1024).setMaxSingleUploadSizeLong(1024L * 1024)),
            null, Context.NONE);
        assertArrayEquals(data, blob.downloadContent().toBytes());
        BlobProperties p = blob.getProperties();
        assertEquals(data.length, p.getBlobSize());
        assertEquals("BlockBlob", p.getBlobType().toString());

        BlobClient small = container.getBlobClient("small.txt");
        small.upload(BinaryData.fromString("hello"));
        assertEquals("hello", small.downloadContent().toString());
        // upload without overwrite sends If-None-Match: *: 409 BlobAlreadyExists.
        BlobStorageException e = blobError(() -> small.upload(BinaryData.fromString("again")));
        assertEquals(409, e.getStatusCode());
        assertEquals(BlobErrorCode.BLOB_ALREADY_EXISTS, e.getErrorCode());
        assertEquals("hello", small.downloadContent().toString());

        // A range read.
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        blob.downloadStreamWithResponse(out, new com.azure.storage.blob.models.BlobRange(10, 100L),
            null, null, false, null, Context.NONE);
        byte[] want = new byte[100];
        System.arraycopy(data, 10, want, 0, 100);
        assertArrayEquals(want, out.toByteArray());

        BlobStorageException missing = blobError(() -> container.getBlobClient("nope").downloadContent());
        assertEquals(404, missing.getStatusCode());
        assertEquals(BlobErrorCode.BLOB_NOT_FOUND, missing.getErrorCode());
    }

    @Test
    void conditionalRequests() {
        BlobClient blob = container.getBlobClient("cond.txt");
        blob.upload(BinaryData.fromString("v1"));
        String etag = blob.getProperties().getETag();

        // If-Match with a stale ETag: 412 ConditionNotMet, on reads and writes.
        BlobStorageException e = blobError(() -> blob.downloadStreamWithResponse(new ByteArrayOutputStream(),
            null, null, new BlobRequestConditions().setIfMatch("\"0x1\""), false, null, Context.NONE));
        assertEquals(412, e.getStatusCode());
        assertEquals(BlobErrorCode.CONDITION_NOT_MET, e.getErrorCode());
        e = blobError(() -> blob.uploadWithResponse(new BlobParallelUploadOptions(BinaryData.fromString("v2"))
            .setRequestConditions(new BlobRequestConditions().setIfMatch("\"0x1\"")), null, Context.NONE));
        assertEquals(412, e.getStatusCode());
        assertEquals(BlobErrorCode.CONDITION_NOT_MET, e.getErrorCode());
        assertEquals("v1", blob.downloadContent().toString());

        // If-None-Match with the current ETag on a read: 304 Not Modified.
        e = blobError(() -> blob.getPropertiesWithResponse(
            new BlobRequestConditions().setIfNoneMatch(etag), null, Context.NONE));
        assertEquals(304, e.getStatusCode());
        e = blobError(() -> blob.downloadStreamWithResponse(new ByteArrayOutputStream(),
            null, null, new BlobRequestConditions().setIfNoneMatch(etag), false, null, Context.NONE));
        assertEquals(304, e.getStatusCode());

        // If-Match with the current ETag succeeds and changes the ETag.
        blob.uploadWithResponse(new BlobParallelUploadOptions(BinaryData.fromString("v2"))
            .setRequestConditions(new BlobRequestConditions().setIfMatch(etag)), null, Context.NONE);
        assertEquals("v2", blob.downloadContent().toString());
        assertFalse(etag.equals(blob.getProperties().getETag()));
        // If-Modified-Since in the future: 304 on a read.
        e = blobError(() -> blob.getPropertiesWithResponse(new BlobRequestConditions()
            .setIfModifiedSince(OffsetDateTime.now().plusHours(1)), null, Context.NONE));
        assertEquals(304, e.getStatusCode());
    }

    @Test
    void leases() {
        BlobClient blob = container.getBlobClient("leased.txt");
        blob.upload(BinaryData.fromString("leased"));
        String id = UUID.randomUUID().toString();
        BlobLeaseClient lease = new BlobLeaseClientBuilder().blobClient(blob).leaseId(id).buildClient();
        assertEquals(id, lease.acquireLease(15));
        assertEquals(LeaseStateType.LEASED, blob.getProperties().getLeaseState());

        // A write without the lease id: 412 LeaseIdMissing.
        BlobStorageException e = blobError(() -> blob.upload(BinaryData.fromString("x"), true));
        assertEquals(412, e.getStatusCode());
        assertEquals(BlobErrorCode.LEASE_ID_MISSING, e.getErrorCode());
        // A write with another lease id: 412 LeaseIdMismatchWithBlobOperation.
        e = blobError(() -> blob.uploadWithResponse(new BlobParallelUploadOptions(BinaryData.fromString("x"))
            .setRequestConditions(new BlobRequestConditions().setLeaseId(UUID.randomUUID().toString())),
            null, Context.NONE));
        assertEquals(412, e.getStatusCode());
        assertEquals(BlobErrorCode.LEASE_ID_MISMATCH_WITH_BLOB_OPERATION, e.getErrorCode());
        // A second acquire with another proposed id: 409 LeaseAlreadyPresent.
        BlobLeaseClient other = new BlobLeaseClientBuilder().blobClient(blob)
            .leaseId(UUID.randomUUID().toString()).buildClient();
        e = blobError(() -> other.acquireLease(15));
        assertEquals(409, e.getStatusCode());
        assertEquals(BlobErrorCode.LEASE_ALREADY_PRESENT, e.getErrorCode());
        // Renew with the wrong id: 409 LeaseIdMismatchWithLeaseOperation.
        e = blobError(other::renewLease);
        assertEquals(409, e.getStatusCode());
        assertEquals(BlobErrorCode.LEASE_ID_MISMATCH_WITH_LEASE_OPERATION, e.getErrorCode());

        // The holder writes and renews.
        blob.uploadWithResponse(new BlobParallelUploadOptions(BinaryData.fromString("by holder"))
            .setRequestConditions(new BlobRequestConditions().setLeaseId(id)), null, Context.NONE);
        assertEquals(id, lease.renewLease());

        // Break with a zero period: broken at once; renew then fails 409.
        assertEquals(0, lease.breakLeaseWithResponse(0, null, null, Context.NONE).getValue());
        assertEquals(LeaseStateType.BROKEN, blob.getProperties().getLeaseState());
        e = blobError(lease::renewLease);
        assertEquals(409, e.getStatusCode());
        assertEquals(BlobErrorCode.LEASE_IS_BROKEN_AND_CANNOT_BE_RENEWED, e.getErrorCode());
        // Release with the holder's id ends a broken lease (Lease Blob:
        // Broken (A) + Release (A) -> Available); a second release is 409.
        lease.releaseLease();
        assertEquals(LeaseStateType.AVAILABLE, blob.getProperties().getLeaseState());
        blob.upload(BinaryData.fromString("free"), true);
        assertEquals("free", blob.downloadContent().toString());
        e = blobError(lease::releaseLease);
        assertEquals(409, e.getStatusCode());
    }

    /**
     * Blob Batch: two deletes that succeed and one of a missing blob. The
     * SDK must surface the failing sub-request as BlobNotFound (it reads
     * the sub-response's x-ms-error-code header).
     */
    @Test
    void batchDeleteWithOneFailure() {
        BlobBatchClient batchClient = new BlobBatchClientBuilder(service).buildClient();
        String url = container.getBlobContainerUrl();
        for (String n : new String[] {"b1", "b2"}) {
            container.getBlobClient(n).upload(BinaryData.fromString(n));
        }
        List<String> urls = List.of(url + "/b1", url + "/b2", url + "/missing");
        BlobBatch batch = batchClient.getBlobBatch();
        List<Response<Void>> responses = new ArrayList<>();
        for (String u : urls) {
            responses.add(batch.deleteBlob(u));
        }
        batchClient.submitBatchWithResponse(batch, false, null, Context.NONE);
        assertEquals(202, responses.get(0).getStatusCode());
        assertEquals(202, responses.get(1).getStatusCode());
        BlobStorageException e = blobError(() -> responses.get(2).getStatusCode());
        assertEquals(404, e.getStatusCode());
        assertEquals(BlobErrorCode.BLOB_NOT_FOUND, e.getErrorCode());
        assertFalse(container.getBlobClient("b1").exists());
        assertFalse(container.getBlobClient("b2").exists());

        // throwOnAnyFailure: one aggregated exception with the one failure.
        container.getBlobClient("b3").upload(BinaryData.fromString("b3"));
        BlobBatch batch2 = batchClient.getBlobBatch();
        batch2.deleteBlob(url + "/b3");
        batch2.deleteBlob(url + "/missing");
        BlobBatchStorageException agg = assertThrows(BlobBatchStorageException.class,
            () -> batchClient.submitBatch(batch2));
        List<BlobStorageException> failures = new ArrayList<>();
        agg.getBatchExceptions().forEach(failures::add);
        assertEquals(1, failures.size());
        assertEquals(404, failures.get(0).getStatusCode());
        assertEquals(BlobErrorCode.BLOB_NOT_FOUND, failures.get(0).getErrorCode());
        assertFalse(container.getBlobClient("b3").exists());
    }

    @Test
    void serviceSas() {
        BlobClient blob = container.getBlobClient("sas.txt");
        blob.upload(BinaryData.fromString("shared"));
        String sas = blob.generateSas(new BlobServiceSasSignatureValues(OffsetDateTime.now().plusHours(1),
            new BlobSasPermission().setReadPermission(true)));
        BlobClient viaSas = new BlobClientBuilder().endpoint(blob.getBlobUrl()).sasToken(sas)
            .retryOptions(Env.NO_RETRY).buildClient();
        assertEquals("shared", viaSas.downloadContent().toString());
        // Read-only: a write is 403 AuthorizationPermissionMismatch.
        BlobStorageException e = blobError(() -> viaSas.upload(BinaryData.fromString("x"), true));
        assertEquals(403, e.getStatusCode());
        assertEquals(BlobErrorCode.AUTHORIZATION_PERMISSION_MISMATCH, e.getErrorCode());
        // The signature covers the blob name: another blob is 403 AuthenticationFailed.
        BlobClient otherBlob = new BlobClientBuilder().endpoint(container.getBlobContainerUrl() + "/other")
            .sasToken(sas).retryOptions(Env.NO_RETRY).buildClient();
        e = blobError(otherBlob::downloadContent);
        assertEquals(403, e.getStatusCode());
        assertEquals(BlobErrorCode.AUTHENTICATION_FAILED, e.getErrorCode());
        // Expired: 403 AuthenticationFailed.
        String expired = blob.generateSas(new BlobServiceSasSignatureValues(OffsetDateTime.now().minusMinutes(5),
            new BlobSasPermission().setReadPermission(true)));
        BlobClient viaExpired = new BlobClientBuilder().endpoint(blob.getBlobUrl()).sasToken(expired)
            .retryOptions(Env.NO_RETRY).buildClient();
        e = blobError(viaExpired::downloadContent);
        assertEquals(403, e.getStatusCode());
        assertEquals(BlobErrorCode.AUTHENTICATION_FAILED, e.getErrorCode());
        // A container SAS with write and create lets a client upload.
        String csas = container.generateSas(new BlobServiceSasSignatureValues(OffsetDateTime.now().plusHours(1),
            BlobSasPermission.parse("rcwl")));
        BlobClient writer = new BlobClientBuilder().endpoint(container.getBlobContainerUrl() + "/bysas.txt")
            .sasToken(csas).retryOptions(Env.NO_RETRY).buildClient();
        writer.upload(BinaryData.fromString("written with a SAS"));
        assertEquals("written with a SAS", container.getBlobClient("bysas.txt").downloadContent().toString());
    }

    @Test
    void accountSas() {
        String sas = service.generateAccountSas(new AccountSasSignatureValues(OffsetDateTime.now().plusHours(1),
            AccountSasPermission.parse("rlc"), AccountSasService.parse("b"), AccountSasResourceType.parse("sco")));
        BlobServiceClient viaSas = new BlobServiceClientBuilder().endpoint(Env.endpoint("blob")).sasToken(sas)
            .retryOptions(Env.NO_RETRY).buildClient();
        boolean found = false;
        for (BlobContainerItem c : viaSas.listBlobContainers()) {
            found |= c.getName().equals(container.getBlobContainerName());
        }
        assertTrue(found, "account SAS lists the test container");
        BlobContainerClient c = viaSas.getBlobContainerClient(container.getBlobContainerName());
        c.getBlobClient("acct.txt").upload(BinaryData.fromString("via account SAS"));
        assertEquals("via account SAS", container.getBlobClient("acct.txt").downloadContent().toString());
        // No delete permission: 403 AuthorizationPermissionMismatch.
        BlobStorageException e = blobError(() -> c.getBlobClient("acct.txt").delete());
        assertEquals(403, e.getStatusCode());
        assertEquals(BlobErrorCode.AUTHORIZATION_PERMISSION_MISMATCH, e.getErrorCode());
        // The SAS is for the Blob service only: the resource types of an
        // account SAS without "o" cannot read a blob.
        String svcOnly = service.generateAccountSas(new AccountSasSignatureValues(OffsetDateTime.now().plusHours(1),
            AccountSasPermission.parse("r"), AccountSasService.parse("b"), AccountSasResourceType.parse("s")));
        BlobClient noObject = new BlobClientBuilder()
            .endpoint(container.getBlobClient("acct.txt").getBlobUrl()).sasToken(svcOnly)
            .retryOptions(Env.NO_RETRY).buildClient();
        e = blobError(noObject::downloadContent);
        assertEquals(403, e.getStatusCode());
        assertEquals(BlobErrorCode.AUTHORIZATION_RESOURCE_TYPE_MISMATCH, e.getErrorCode());
    }
}
