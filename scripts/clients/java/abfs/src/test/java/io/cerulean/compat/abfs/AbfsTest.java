package io.cerulean.compat.abfs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.FileNotFoundException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.stream.Collectors;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileAlreadyExistsException;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.permission.AclEntry;
import org.apache.hadoop.fs.permission.AclStatus;
import org.apache.hadoop.fs.permission.FsPermission;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Hadoop's ABFS driver against Cerulean's dfs endpoint. ABFS builds its
 * URL from the account host of the abfs:// URI, over HTTPS; two options of
 * the driver point it at a local server instead: fs.azure.abfs.endpoint
 * (ip:port; the account then goes into the path, as for an emulator) and
 * fs.azure.always.use.https=false with the plain abfs:// scheme.
 */
class AbfsTest {
    static final String ACCOUNT = "devstoreaccount1";
    static final String HOST = ACCOUNT + ".dfs.core.windows.net";
    static final String KEY =
        "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
    static FileSystem fs;

    @BeforeAll
    static void setUp() throws Exception {
        String dfs = System.getProperty("cerulean.dfs");
        if (dfs == null || dfs.isEmpty() || dfs.startsWith("${")) {
            throw new IllegalStateException("system property cerulean.dfs is not set: run scripts/clients-java.sh");
        }
        URI endpoint = URI.create(dfs);
        Configuration conf = new Configuration(false);
        conf.set("fs.abfs.impl", "org.apache.hadoop.fs.azurebfs.AzureBlobFileSystem");
        conf.set("fs.azure.abfs.endpoint", endpoint.getHost() + ":" + endpoint.getPort());
        conf.setBoolean("fs.azure.always.use.https", false);
        conf.set("fs.azure.account.auth.type", "SharedKey");
        conf.set("fs.azure.account.key." + HOST, KEY);
        conf.setBoolean("fs.azure.createRemoteFileSystemDuringInitialization", true);
        // One try: an error must fail the test rather than be retried.
        conf.setInt("fs.azure.io.retry.max.retries", 0);
        String name = "abfs" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        fs = FileSystem.newInstance(URI.create("abfs://" + name + "@" + HOST + "/"), conf);
    }

    @AfterAll
    static void tearDown() throws Exception {
        if (fs != null) {
            fs.close();
        }
    }

    static void write(Path p, String s) throws Exception {
        try (FSDataOutputStream out = fs.create(p, false)) {
            out.write(s.getBytes(StandardCharsets.UTF_8));
        }
    }

    static String read(Path p) throws Exception {
        try (FSDataInputStream in = fs.open(p)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void createListRenameAppendDelete() throws Exception {
        Path dir = new Path("/data/in");
        assertTrue(fs.mkdirs(dir));
        int n = 60;
        for (int i = 0; i < n; i++) {
            write(new Path(dir, String.format("part-%03d", i)), "row " + i);
        }
        write(new Path(dir, "sub/nested.txt"), "nested");
        FileStatus[] listed = fs.listStatus(dir);
        assertEquals(n + 1, listed.length);
        FileStatus part = fs.getFileStatus(new Path(dir, "part-007"));
        assertTrue(part.isFile());
        assertEquals("row 7".length(), part.getLen());
        assertThrows(FileAlreadyExistsException.class, () -> write(new Path(dir, "part-000"), "again"));

        // Rename the directory: one call, every child moved.
        Path moved = new Path("/data/out");
        assertTrue(fs.rename(dir, moved));
        assertFalse(fs.exists(dir));
        List<String> names = Arrays.stream(fs.listStatus(moved)).map(s -> s.getPath().getName())
            .sorted().collect(Collectors.toList());
        assertEquals(n + 1, names.size());
        assertEquals("part-000", names.get(0));
        assertEquals("sub", names.get(n));
        assertEquals("row 42", read(new Path(moved, "part-042")));
        assertEquals("nested", read(new Path(moved, "sub/nested.txt")));
        // Renaming a missing source is false, not an exception (Hadoop's contract).
        assertFalse(fs.rename(dir, new Path("/data/elsewhere")));

        // Append.
        Path log = new Path(moved, "log.txt");
        write(log, "one\n");
        try (FSDataOutputStream out = fs.append(log)) {
            out.write("two\n".getBytes(StandardCharsets.UTF_8));
        }
        try (FSDataOutputStream out = fs.append(log)) {
            out.write("three\n".getBytes(StandardCharsets.UTF_8));
        }
        assertEquals("one\ntwo\nthree\n", read(log));
        assertEquals(14, fs.getFileStatus(log).getLen());

        // A larger file, read back whole.
        byte[] big = new byte[5 * 1024 * 1024 + 3];
        new java.util.Random(4).nextBytes(big);
        Path bigPath = new Path(moved, "big.bin");
        try (FSDataOutputStream out = fs.create(bigPath)) {
            out.write(big);
        }
        try (FSDataInputStream in = fs.open(bigPath)) {
            assertArrayEquals(big, in.readAllBytes());
        }

        // Delete: a non-empty directory needs recursive.
        assertThrows(java.io.IOException.class, () -> fs.delete(moved, false));
        assertTrue(fs.delete(moved, true));
        assertFalse(fs.exists(moved));
        assertThrows(FileNotFoundException.class, () -> fs.getFileStatus(new Path(moved, "part-000")));
    }

    @Test
    void permissionsAndAcls() throws Exception {
        Path p = new Path("/perm/file.txt");
        write(p, "secret");
        fs.setPermission(p, new FsPermission("640"));
        assertEquals("rw-r-----", fs.getFileStatus(p).getPermission().toString());
        fs.setPermission(p.getParent(), new FsPermission("750"));
        assertEquals("rwxr-x---", fs.getFileStatus(p.getParent()).getPermission().toString());

        String oid = "a0a1a2a3-b4b5-c6c7-d8d9-e0e1e2e3e4e5";
        fs.modifyAclEntries(p, AclEntry.parseAclSpec("user:" + oid + ":r--", true));
        AclStatus acl = fs.getAclStatus(p);
        assertTrue(acl.getEntries().stream().anyMatch(e -> oid.equals(e.getName())),
            "named user entry read back: " + acl);
        fs.removeAclEntries(p, AclEntry.parseAclSpec("user:" + oid, false));
        assertFalse(fs.getAclStatus(p).getEntries().stream().anyMatch(e -> oid.equals(e.getName())));
        assertThrows(FileNotFoundException.class, () -> fs.getAclStatus(new Path("/perm/absent")));
    }
}
