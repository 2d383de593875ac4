package io.cerulean.compat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.core.http.rest.Response;
import com.azure.core.util.BinaryData;
import com.azure.core.util.Context;
import com.azure.storage.blob.BlobClient;
import com.azure.storage.blob.BlobContainerClient;
import com.azure.storage.blob.BlobServiceClient;
import com.azure.storage.blob.BlobServiceClientBuilder;
import com.azure.storage.blob.changefeed.BlobChangefeedClient;
import com.azure.storage.blob.changefeed.BlobChangefeedClientBuilder;
import com.azure.storage.blob.changefeed.BlobChangefeedPagedResponse;
import com.azure.storage.blob.changefeed.models.BlobChangefeedEvent;
import com.azure.storage.blob.models.AccessTier;
import com.azure.storage.blob.models.BlobRequestConditions;
import com.azure.storage.blob.models.BlobStorageException;
import com.azure.storage.blob.models.BlockBlobItem;
import com.azure.storage.blob.options.BlobParallelUploadOptions;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The blob change feed client (azure-storage-blob-changefeed) against the
 * server scripts/clients-java.sh started with --blob-change-feed (system
 * property cerulean.cfblob): a workload of blob writes, read back as the
 * client walks $blobchangefeed on Azure.
 */
class ChangeFeedTest {
    private static final String SUBJ = "/blobServices/default/containers/%s/blobs/%s";

    @Test
    void everyCommittedWriteOnceInOrder() {
        BlobServiceClient svc = new BlobServiceClientBuilder().endpoint(Env.endpoint("cfblob"))
            .credential(Env.CRED).retryOptions(Env.NO_RETRY).buildClient();
        String c = Env.name("jfeed");
        BlobContainerClient cc = svc.createBlobContainer(c);
        BlobClient b = cc.getBlobClient("a.txt");
        Response<BlockBlobItem> put = b.uploadWithResponse(new BlobParallelUploadOptions(BinaryData.fromString("hello")), null, Context.NONE);
        BlobStorageException refused = assertThrows(BlobStorageException.class, () -> b.uploadWithResponse(
            new BlobParallelUploadOptions(BinaryData.fromString("no")).setRequestConditions(new BlobRequestConditions().setIfMatch("\"0x1\"")),
            null, Context.NONE));
        assertEquals(412, refused.getStatusCode());
        b.upload(BinaryData.fromString("hello again"), true);
        b.setMetadata(Map.of("k", "v"));
        b.createSnapshot();
        b.setAccessTier(AccessTier.COOL);
        Response<Void> del = b.deleteWithResponse(com.azure.storage.blob.models.DeleteSnapshotsOptionType.INCLUDE, null, null, Context.NONE);

        BlobChangefeedClient cf = new BlobChangefeedClientBuilder(svc).buildClient();
        List<BlobChangefeedEvent> events = new ArrayList<>();
        for (BlobChangefeedEvent e : cf.getEvents()) {
            if (e.getSubject().startsWith(String.format(SUBJ, c, ""))) {
                events.add(e);
            }
        }
        String[][] want = {
            {"BlobCreated", "PutBlob"}, {"BlobCreated", "PutBlob"}, {"BlobPropertiesUpdated", "SetBlobMetadata"},
            {"BlobSnapshotCreated", "SnapshotBlob"}, {"BlobTierChanged", "SetBlobTier"}, {"BlobDeleted", "DeleteBlob"},
        };
        List<String> got = new ArrayList<>();
        for (BlobChangefeedEvent e : events) {
            got.add(e.getEventType() + " " + e.getData().getApi() + " " + e.getSubject());
        }
        List<String> wanted = new ArrayList<>();
        for (String[] w : want) {
            wanted.add(w[0] + " " + w[1] + " " + String.format(SUBJ, c, "a.txt"));
        }
        assertEquals(wanted, got);
        for (int i = 1; i < events.size(); i++) {
            assertTrue(events.get(i - 1).getData().getSequencer().compareTo(events.get(i).getData().getSequencer()) < 0, "sequencers in order");
        }
        assertEquals(put.getHeaders().getValue("x-ms-request-id"), events.get(0).getData().getRequestId());
        assertEquals(put.getValue().getETag().replace("\"", ""), events.get(0).getData().getETag().replace("\"", ""));
        assertEquals(5L, events.get(0).getData().getContentLength());
        assertEquals(del.getHeaders().getValue("x-ms-request-id"), events.get(5).getData().getRequestId());
        assertTrue(events.get(0).getEventTime().isAfter(OffsetDateTime.now().minusHours(1)));
    }

    @Test
    void resumeFromAContinuationToken() {
        BlobServiceClient svc = new BlobServiceClientBuilder().endpoint(Env.endpoint("cfblob"))
            .credential(Env.CRED).retryOptions(Env.NO_RETRY).buildClient();
        BlobContainerClient cc = svc.createBlobContainer(Env.name("jfeedc"));
        for (int i = 0; i < 3; i++) {
            cc.getBlobClient("b" + i).upload(BinaryData.fromString("x"), true);
        }
        BlobChangefeedClient cf = new BlobChangefeedClientBuilder(svc).buildClient();
        List<String> all = new ArrayList<>();
        for (BlobChangefeedEvent e : cf.getEvents()) {
            all.add(e.getId());
        }
        Iterator<BlobChangefeedPagedResponse> pages = cf.getEvents().iterableByPage(2).iterator();
        BlobChangefeedPagedResponse first = pages.next();
        assertEquals(2, first.getValue().size());
        List<String> rest = new ArrayList<>();
        for (BlobChangefeedEvent e : cf.getEvents(first.getContinuationToken())) {
            rest.add(e.getId());
        }
        assertEquals(all.subList(2, all.size()), rest);
        List<String> inHours = new ArrayList<>();
        for (BlobChangefeedEvent e : cf.getEvents(OffsetDateTime.now().minusHours(2), OffsetDateTime.now().plusHours(2))) {
            inHours.add(e.getId());
        }
        assertEquals(all, inHours);
    }
}
