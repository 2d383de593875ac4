package io.cerulean.compat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.core.util.BinaryData;
import com.azure.storage.file.datalake.DataLakeDirectoryClient;
import com.azure.storage.file.datalake.DataLakeFileClient;
import com.azure.storage.file.datalake.DataLakeFileSystemClient;
import com.azure.storage.file.datalake.DataLakeServiceClient;
import com.azure.storage.file.datalake.DataLakeServiceClientBuilder;
import com.azure.storage.file.datalake.models.DataLakeStorageException;
import com.azure.storage.file.datalake.models.ListPathsOptions;
import com.azure.storage.file.datalake.models.PathAccessControl;
import com.azure.storage.file.datalake.models.PathAccessControlEntry;
import com.azure.storage.file.datalake.models.PathItem;
import com.azure.storage.file.datalake.models.PathPermissions;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** azure-storage-file-datalake against Cerulean's dfs endpoint (hierarchical namespace). */
class DataLakeTest {
    static DataLakeFileSystemClient newFileSystem() {
        DataLakeServiceClient svc = new DataLakeServiceClientBuilder().endpoint(Env.endpoint("dfs"))
            .credential(Env.CRED).retryOptions(Env.NO_RETRY).buildClient();
        return svc.createFileSystem(Env.name("javafs"));
    }

    static String read(DataLakeFileClient f) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        f.read(out);
        return out.toString(StandardCharsets.UTF_8);
    }

    @Test
    void appendFlushRenameAcl() {
        DataLakeFileSystemClient fs = newFileSystem();
        DataLakeDirectoryClient dir = fs.createDirectory("dir");
        DataLakeFileClient f = dir.createFile("a.txt");
        byte[] p1 = "hello ".getBytes(StandardCharsets.UTF_8);
        byte[] p2 = "data lake".getBytes(StandardCharsets.UTF_8);
        f.append(BinaryData.fromBytes(p1), 0);
        f.append(BinaryData.fromBytes(p2), p1.length);
        // Appended but not flushed: still empty.
        assertEquals(0, f.getProperties().getFileSize());
        f.flush(p1.length + p2.length, true);
        assertEquals("hello data lake", read(f));
        // An append at the wrong position: 400 InvalidFlushPosition on flush.
        f.append(BinaryData.fromString("!"), p1.length + p2.length);
        DataLakeStorageException e = assertThrows(DataLakeStorageException.class, () -> f.flush(3, true));
        assertEquals(400, e.getStatusCode());
        assertEquals("InvalidFlushPosition", e.getErrorCode());
        dir.createSubdirectory("sub").createFile("b.txt");
        // Creating an existing file without overwrite: 409 PathAlreadyExists.
        e = assertThrows(DataLakeStorageException.class, () -> dir.createFile("a.txt", false));
        assertEquals(409, e.getStatusCode());
        assertEquals("PathAlreadyExists", e.getErrorCode());

        // Rename the directory: every path under it moves at once.
        DataLakeDirectoryClient moved = dir.rename(null, "renamed");
        assertFalse(dir.exists());
        assertTrue(moved.exists());
        assertEquals("hello data lake", read(moved.getFileClient("a.txt")));
        List<String> paths = fs.listPaths(new ListPathsOptions().setRecursive(true), null).stream()
            .map(PathItem::getName).sorted().collect(Collectors.toList());
        assertEquals(List.of("renamed", "renamed/a.txt", "renamed/sub", "renamed/sub/b.txt"), paths);
        // Renaming a path that no longer exists: 404 SourcePathNotFound.
        e = assertThrows(DataLakeStorageException.class, () -> dir.rename(null, "again"));
        assertEquals(404, e.getStatusCode());
        assertEquals("SourcePathNotFound", e.getErrorCode());

        // ACLs: set, get back, and permissions in symbolic form.
        DataLakeFileClient a = moved.getFileClient("a.txt");
        String oid = "a0a1a2a3-b4b5-c6c7-d8d9-e0e1e2e3e4e5";
        List<PathAccessControlEntry> acl = PathAccessControlEntry.parseList(
            "user::rw-,user:" + oid + ":r--,group::r--,mask::r--,other::---");
        a.setAccessControlList(acl, null, null);
        PathAccessControl got = a.getAccessControl();
        assertEquals(PathAccessControlEntry.serializeList(acl),
            PathAccessControlEntry.serializeList(got.getAccessControlList()));
        assertEquals("0640", got.getPermissions().toString());  // rw-r-----: the mask is the group bits
        a.setPermissions(PathPermissions.parseSymbolic("rwxr-x---"), null, null);
        assertEquals("0750", a.getAccessControl().getPermissions().toString());
        // The directory's ACL with default entries, read back.
        List<PathAccessControlEntry> dirAcl = PathAccessControlEntry.parseList(
            "user::rwx,group::r-x,other::---,default:user::rwx,default:group::r-x,default:other::---");
        moved.setAccessControlList(dirAcl, null, null);
        assertEquals(PathAccessControlEntry.serializeList(dirAcl),
            PathAccessControlEntry.serializeList(moved.getAccessControl().getAccessControlList()));
        // The ACL of a missing path: 404.
        e = assertThrows(DataLakeStorageException.class, () -> fs.getFileClient("absent").getAccessControl());
        assertEquals(404, e.getStatusCode());
    }
}
