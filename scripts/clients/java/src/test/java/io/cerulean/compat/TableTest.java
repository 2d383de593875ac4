package io.cerulean.compat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.azure.core.credential.AzureNamedKeyCredential;
import com.azure.core.util.Context;
import com.azure.data.tables.TableClient;
import com.azure.data.tables.TableServiceClient;
import com.azure.data.tables.TableServiceClientBuilder;
import com.azure.data.tables.models.ListEntitiesOptions;
import com.azure.data.tables.models.TableEntity;
import com.azure.data.tables.models.TableEntityUpdateMode;
import com.azure.data.tables.models.TableErrorCode;
import com.azure.data.tables.models.TableServiceException;
import com.azure.data.tables.models.TableTransactionAction;
import com.azure.data.tables.models.TableTransactionActionType;
import com.azure.data.tables.models.TableTransactionFailedException;
import com.azure.data.tables.models.TableTransactionResult;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** azure-data-tables against Cerulean's Table service. */
class TableTest {
    static TableServiceClient svc;

    @BeforeAll
    static void setUp() {
        svc = new TableServiceClientBuilder().endpoint(Env.endpoint("table"))
            .credential(new AzureNamedKeyCredential(Env.ACCOUNT, Env.KEY)).buildClient();
    }

    static TableClient newTable() {
        return svc.createTable(Env.name("javat"));
    }

    @Test
    void optimisticConcurrency() {
        TableClient t = newTable();
        t.createEntity(new TableEntity("p", "r").addProperty("n", 1).addProperty("s", "one"));
        TableEntity first = t.getEntity("p", "r");
        assertEquals(1, first.getProperty("n"));
        String etag = first.getETag();

        // Update with the current ETag (If-Match) succeeds and changes it.
        first.addProperty("n", 2);
        t.updateEntityWithResponse(first, TableEntityUpdateMode.REPLACE, true, null, Context.NONE);
        TableEntity second = t.getEntity("p", "r");
        assertEquals(2, second.getProperty("n"));
        assertNotEquals(etag, second.getETag());

        // The stale ETag: 412 UpdateConditionNotSatisfied, for merge,
        // replace and delete; the entity is unchanged.
        TableEntity stale = new TableEntity("p", "r").addProperty("n", 3);
        TableEntity staleWithEtag = withEtag(stale, etag);
        for (TableEntityUpdateMode mode : TableEntityUpdateMode.values()) {
            TableServiceException e = assertThrows(TableServiceException.class,
                () -> t.updateEntityWithResponse(staleWithEtag, mode, true, null, Context.NONE));
            assertEquals(412, e.getResponse().getStatusCode());
            assertEquals(TableErrorCode.UPDATE_CONDITION_NOT_SATISFIED, e.getValue().getErrorCode());
        }
        TableServiceException e = assertThrows(TableServiceException.class,
            () -> t.deleteEntityWithResponse(staleWithEtag, true, null, Context.NONE));
        assertEquals(412, e.getResponse().getStatusCode());
        assertEquals(TableErrorCode.UPDATE_CONDITION_NOT_SATISFIED, e.getValue().getErrorCode());
        assertEquals(2, t.getEntity("p", "r").getProperty("n"));

        // Merge keeps the other properties; delete with the current ETag.
        t.updateEntity(new TableEntity("p", "r").addProperty("m", "merged"), TableEntityUpdateMode.MERGE);
        TableEntity merged = t.getEntity("p", "r");
        assertEquals("merged", merged.getProperty("m"));
        assertEquals(2, merged.getProperty("n"));
        t.deleteEntityWithResponse(merged, true, null, Context.NONE);
        e = assertThrows(TableServiceException.class, () -> t.getEntity("p", "r"));
        assertEquals(404, e.getResponse().getStatusCode());
        assertEquals(TableErrorCode.RESOURCE_NOT_FOUND, e.getValue().getErrorCode());

        // Creating an existing entity: 409 EntityAlreadyExists.
        t.createEntity(new TableEntity("p", "x"));
        e = assertThrows(TableServiceException.class, () -> t.createEntity(new TableEntity("p", "x")));
        assertEquals(TableErrorCode.ENTITY_ALREADY_EXISTS, e.getValue().getErrorCode());
    }

    /** An entity carrying an ETag, as the SDK reads one from a returned entity. */
    static TableEntity withEtag(TableEntity src, String etag) {
        // The SDK takes the If-Match value of updateEntityWithResponse and
        // deleteEntityWithResponse from the entity's ETag, which only entities
        // read from the service carry: read a copy and overwrite its properties.
        TableEntity e = new TableEntity(src.getPartitionKey(), src.getRowKey());
        e.getProperties().putAll(src.getProperties());
        e.getProperties().put("odata.etag", etag);
        return e;
    }

    @Test
    void batchTransactions() {
        TableClient t = newTable();
        t.createEntity(new TableEntity("pk", "existing").addProperty("v", "old"));
        TableTransactionResult res = t.submitTransaction(List.of(
            new TableTransactionAction(TableTransactionActionType.CREATE, new TableEntity("pk", "a").addProperty("v", "a")),
            new TableTransactionAction(TableTransactionActionType.UPSERT_MERGE, new TableEntity("pk", "b").addProperty("v", "b")),
            new TableTransactionAction(TableTransactionActionType.UPSERT_REPLACE, new TableEntity("pk", "existing").addProperty("w", "new")),
            new TableTransactionAction(TableTransactionActionType.CREATE, new TableEntity("pk", "c"))));
        assertEquals(4, res.getTransactionActionResponses().size());
        res.getTransactionActionResponses().forEach(r -> assertEquals(204, r.getStatusCode()));
        TableEntity replaced = t.getEntity("pk", "existing");
        assertEquals("new", replaced.getProperty("w"));
        assertFalse(replaced.getProperties().containsKey("v"), "UPSERT_REPLACE drops old properties");

        // One failing action (create of an existing entity, index 1): the
        // whole transaction is rolled back.
        TableTransactionFailedException e = assertThrows(TableTransactionFailedException.class,
            () -> t.submitTransaction(List.of(
                new TableTransactionAction(TableTransactionActionType.CREATE, new TableEntity("pk", "d")),
                new TableTransactionAction(TableTransactionActionType.CREATE, new TableEntity("pk", "a")),
                new TableTransactionAction(TableTransactionActionType.DELETE, new TableEntity("pk", "b")))));
        assertEquals(TableErrorCode.ENTITY_ALREADY_EXISTS, e.getValue().getErrorCode());
        assertEquals(1, e.getFailedTransactionActionIndex());
        List<String> rows = t.listEntities(new ListEntitiesOptions().setFilter("PartitionKey eq 'pk'"), null, Context.NONE)
            .stream().map(TableEntity::getRowKey).sorted().collect(Collectors.toList());
        assertEquals(List.of("a", "b", "c", "existing"), rows);

        // An If-Match delete inside a transaction with a stale ETag: 412.
        TableEntity a = t.getEntity("pk", "a");
        t.updateEntity(new TableEntity("pk", "a").addProperty("v", "changed"));
        e = assertThrows(TableTransactionFailedException.class,
            () -> t.submitTransaction(List.of(
                new TableTransactionAction(TableTransactionActionType.DELETE, a, true))));
        assertEquals(TableErrorCode.UPDATE_CONDITION_NOT_SATISFIED, e.getValue().getErrorCode());
        assertEquals("changed", t.getEntity("pk", "a").getProperty("v"));
    }
}
