package io.cerulean.compat;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.azure.core.http.HttpPipelineCallContext;
import com.azure.core.http.HttpPipelinePosition;
import com.azure.core.http.HttpRequest;
import com.azure.core.http.policy.HttpPipelinePolicy;
import com.azure.core.http.policy.HttpPipelineSyncPolicy;
import com.azure.core.util.Context;
import com.azure.storage.file.share.ShareClient;
import com.azure.storage.file.share.ShareDirectoryClient;
import com.azure.storage.file.share.ShareFileClient;
import com.azure.storage.file.share.ShareServiceClient;
import com.azure.storage.file.share.ShareServiceClientBuilder;
import com.azure.storage.file.share.models.ShareErrorCode;
import com.azure.storage.file.share.models.ShareFileItem;
import com.azure.storage.file.share.models.ShareFileRange;
import com.azure.storage.file.share.models.ShareStorageException;
import com.azure.storage.file.share.models.ShareFileUploadRangeOptions;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.net.MalformedURLException;
import java.net.URL;
import java.util.List;
import java.util.Random;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** azure-storage-file-share against Cerulean's File service. */
class FileShareTest {
    /**
     * The Share builders keep only the scheme and host of an endpoint
     * (ShareServiceClientBuilder.endpoint: protocol + "://" + host), so a
     * path-style endpoint with a port (http://127.0.0.1:port/account) cannot
     * be given to them. This per-call policy, which runs before the Shared
     * Key signature, moves each request to the server's port and puts the
     * account in the path, as every other Azure SDK sends it to an emulator.
     */
    static HttpPipelinePolicy toServer() {
        URL target;
        try {
            target = new URL(Env.endpoint("file"));
        } catch (MalformedURLException e) {
            throw new IllegalStateException(e);
        }
        return new HttpPipelineSyncPolicy() {
            @Override
            protected void beforeSendingRequest(HttpPipelineCallContext ctx) {
                HttpRequest req = ctx.getHttpRequest();
                URL u = req.getUrl();
                try {
                    req.setUrl(new URL(target.getProtocol(), target.getHost(), target.getPort(),
                        target.getPath() + u.getFile()));
                } catch (MalformedURLException e) {
                    throw new IllegalStateException(e);
                }
            }

            @Override
            public HttpPipelinePosition getPipelinePosition() {
                return HttpPipelinePosition.PER_CALL;
            }
        };
    }

    @Test
    void createUploadRangesList() {
        ShareServiceClient svc = new ShareServiceClientBuilder().endpoint("http://127.0.0.1")
            .credential(Env.CRED).retryOptions(Env.NO_RETRY).addPolicy(toServer()).buildClient();
        ShareClient share = svc.createShare(Env.name("javas"));
        ShareDirectoryClient dir = share.getRootDirectoryClient().createSubdirectory("dir");
        dir.createSubdirectory("sub");
        int size = 3 * 1024 * 1024;
        ShareFileClient f = dir.createFile("data.bin", size);
        assertEquals(size, f.getProperties().getContentLength());
        // A new file has no ranges.
        assertEquals(0, f.listRanges().stream().count());

        byte[] a = new byte[4096];
        byte[] b = new byte[8192];
        new Random(2).nextBytes(a);
        new Random(3).nextBytes(b);
        f.uploadRangeWithResponse(new ShareFileUploadRangeOptions(new ByteArrayInputStream(a), a.length)
            .setOffset(0L), null, Context.NONE);
        f.uploadRangeWithResponse(new ShareFileUploadRangeOptions(new ByteArrayInputStream(b), b.length)
            .setOffset(1024L * 1024), null, Context.NONE);
        List<ShareFileRange> ranges = f.listRanges().stream().collect(Collectors.toList());
        assertEquals(2, ranges.size());
        assertEquals(0, ranges.get(0).getStart());
        assertEquals(a.length - 1, ranges.get(0).getEnd());
        assertEquals(1024L * 1024, ranges.get(1).getStart());
        assertEquals(1024L * 1024 + b.length - 1, ranges.get(1).getEnd());

        // Read back a range spanning written data and the hole after it.
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        f.downloadWithResponse(out, new ShareFileRange(1024L * 1024, 1024L * 1024 + b.length + 99), false, null, Context.NONE);
        byte[] got = out.toByteArray();
        assertEquals(b.length + 100, got.length);
        byte[] head = new byte[b.length];
        System.arraycopy(got, 0, head, 0, b.length);
        assertArrayEquals(b, head);
        for (int i = b.length; i < got.length; i++) {
            assertEquals(0, got[i], "unwritten bytes read as zero");
        }

        // Clear the first range: one range left.
        f.clearRange(a.length);
        assertEquals(1, f.listRanges().stream().count());

        // A range past the end of the file: 416 InvalidRange.
        ShareStorageException e = assertThrows(ShareStorageException.class,
            () -> f.uploadRangeWithResponse(new ShareFileUploadRangeOptions(new ByteArrayInputStream(a), a.length)
                .setOffset((long) size), null, Context.NONE));
        assertEquals(416, e.getStatusCode());
        assertEquals(ShareErrorCode.INVALID_RANGE, e.getErrorCode());

        List<String> names = dir.listFilesAndDirectories().stream()
            .map(i -> (i.isDirectory() ? "d:" : "f:") + i.getName()).sorted().collect(Collectors.toList());
        assertEquals(List.of("d:sub", "f:data.bin"), names);
        ShareFileItem item = dir.listFilesAndDirectories().stream().filter(i -> !i.isDirectory()).findFirst().get();
        assertEquals(size, item.getFileSize());

        // Deleting a non-empty directory: 409 DirectoryNotEmpty.
        e = assertThrows(ShareStorageException.class, dir::delete);
        assertEquals(409, e.getStatusCode());
        assertEquals(ShareErrorCode.DIRECTORY_NOT_EMPTY, e.getErrorCode());
        // A missing file: 404 ResourceNotFound.
        e = assertThrows(ShareStorageException.class, () -> dir.getFileClient("nope").getProperties());
        assertEquals(404, e.getStatusCode());
        assertEquals(ShareErrorCode.RESOURCE_NOT_FOUND, e.getErrorCode());
    }
}
