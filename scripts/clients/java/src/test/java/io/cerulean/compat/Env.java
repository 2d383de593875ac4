package io.cerulean.compat;

import com.azure.core.http.policy.ExponentialBackoffOptions;
import com.azure.core.http.policy.RetryOptions;
import com.azure.storage.common.StorageSharedKeyCredential;
import java.util.UUID;

/**
 * The endpoints of the servers scripts/clients-java.sh started, passed as
 * system properties (cerulean.blob, cerulean.queue, cerulean.table,
 * cerulean.file: the flat-namespace server; cerulean.dlblob, cerulean.dfs:
 * the server started with --hierarchical-namespace; cerulean.cfblob: the
 * one started with --blob-change-feed).
 */
final class Env {
    static final String ACCOUNT = "devstoreaccount1";
    static final String KEY =
        "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
    static final StorageSharedKeyCredential CRED = new StorageSharedKeyCredential(ACCOUNT, KEY);
    // One try only: a status the server answers wrongly must fail the test,
    // not be retried into a different one.
    static final RetryOptions NO_RETRY =
        new RetryOptions(new ExponentialBackoffOptions().setMaxRetries(0));

    private Env() {}

    static String endpoint(String service) {
        String v = System.getProperty("cerulean." + service);
        if (v == null || v.isEmpty() || v.startsWith("${")) {
            throw new IllegalStateException("system property cerulean." + service
                + " is not set: run scripts/clients-java.sh");
        }
        return v + "/" + ACCOUNT;
    }

    static String name(String prefix) {
        return prefix + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    }
}
