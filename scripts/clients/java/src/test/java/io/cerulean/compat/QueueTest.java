package io.cerulean.compat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.core.util.Context;
import com.azure.storage.queue.QueueClient;
import com.azure.storage.queue.QueueServiceClient;
import com.azure.storage.queue.QueueServiceClientBuilder;
import com.azure.storage.queue.models.PeekedMessageItem;
import com.azure.storage.queue.models.QueueErrorCode;
import com.azure.storage.queue.models.QueueMessageItem;
import com.azure.storage.queue.models.QueueStorageException;
import com.azure.storage.queue.models.UpdateMessageResult;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** azure-storage-queue against Cerulean's Queue service. */
class QueueTest {
    static QueueClient newQueue() {
        QueueServiceClient svc = new QueueServiceClientBuilder().endpoint(Env.endpoint("queue"))
            .credential(Env.CRED).retryOptions(Env.NO_RETRY).buildClient();
        return svc.createQueue(Env.name("javaq"));
    }

    static List<QueueMessageItem> receive(QueueClient q, int n, Duration visibility) {
        return q.receiveMessages(n, visibility, null, Context.NONE).stream().collect(Collectors.toList());
    }

    @Test
    void popReceiptsAndVisibility() {
        QueueClient q = newQueue();
        q.sendMessage("first");
        q.sendMessage("second");
        assertEquals(2, q.getProperties().getApproximateMessagesCount());

        List<QueueMessageItem> got = receive(q, 1, Duration.ofSeconds(30));
        assertEquals(1, got.size());
        QueueMessageItem m = got.get(0);
        assertEquals("first", m.getBody().toString());
        assertEquals(1, m.getDequeueCount());
        String receipt = m.getPopReceipt();
        // Invisible for 30 s: the next receive sees only the second message,
        // and peek too.
        List<QueueMessageItem> next = receive(q, 5, Duration.ofSeconds(30));
        assertEquals(1, next.size());
        assertEquals("second", next.get(0).getBody().toString());
        assertTrue(q.peekMessages(5, null, Context.NONE).stream().findAny().isEmpty());

        // Update the text and make it visible again at once: a new pop
        // receipt; the old one no longer deletes (404 MessageNotFound).
        UpdateMessageResult upd = q.updateMessage(m.getMessageId(), receipt, "first, updated", Duration.ZERO);
        assertNotEquals(receipt, upd.getPopReceipt());
        QueueStorageException e = assertThrows(QueueStorageException.class,
            () -> q.deleteMessage(m.getMessageId(), receipt));
        assertEquals(404, e.getStatusCode());
        assertEquals(QueueErrorCode.MESSAGE_NOT_FOUND, e.getErrorCode());
        List<PeekedMessageItem> peeked = q.peekMessages(5, null, Context.NONE).stream().collect(Collectors.toList());
        assertEquals(1, peeked.size());
        assertEquals("first, updated", peeked.get(0).getBody().toString());

        // Receive it again: the dequeue count grows; delete with the fresh receipt.
        QueueMessageItem again = receive(q, 1, Duration.ofSeconds(30)).get(0);
        assertEquals(m.getMessageId(), again.getMessageId());
        assertEquals(2, again.getDequeueCount());
        assertEquals("first, updated", again.getBody().toString());
        e = assertThrows(QueueStorageException.class,
            () -> q.deleteMessage(again.getMessageId(), upd.getPopReceipt()));
        assertEquals(404, e.getStatusCode());
        q.deleteMessage(again.getMessageId(), again.getPopReceipt());
        q.deleteMessage(next.get(0).getMessageId(), next.get(0).getPopReceipt());
        assertEquals(0, q.getProperties().getApproximateMessagesCount());
    }

    @Test
    void visibilityTimeoutExpires() throws InterruptedException {
        QueueClient q = newQueue();
        q.sendMessageWithResponse("delayed", Duration.ofSeconds(1), null, null, Context.NONE);
        assertTrue(receive(q, 1, Duration.ofSeconds(1)).isEmpty(), "initial visibility delay hides the message");
        Thread.sleep(1500);
        QueueMessageItem m = receive(q, 1, Duration.ofSeconds(1)).get(0);
        assertEquals("delayed", m.getBody().toString());
        Thread.sleep(1500);
        // The one-second visibility timeout lapsed: visible again.
        QueueMessageItem m2 = receive(q, 1, Duration.ofSeconds(30)).get(0);
        assertEquals(m.getMessageId(), m2.getMessageId());
        assertEquals(2, m2.getDequeueCount());
        // Update with a stale pop receipt: 404 MessageNotFound.
        QueueStorageException e = assertThrows(QueueStorageException.class,
            () -> q.updateMessage(m.getMessageId(), m.getPopReceipt(), "x", Duration.ZERO));
        assertEquals(404, e.getStatusCode());
        assertEquals(QueueErrorCode.MESSAGE_NOT_FOUND, e.getErrorCode());
        // A visibility timeout above 7 days is refused (400).
        e = assertThrows(QueueStorageException.class,
            () -> q.updateMessage(m2.getMessageId(), m2.getPopReceipt(), "x", Duration.ofDays(8)));
        assertEquals(400, e.getStatusCode());
    }

    @Test
    void missingQueue() {
        QueueServiceClient svc = new QueueServiceClientBuilder().endpoint(Env.endpoint("queue"))
            .credential(Env.CRED).retryOptions(Env.NO_RETRY).buildClient();
        QueueClient q = svc.getQueueClient(Env.name("absent"));
        QueueStorageException e = assertThrows(QueueStorageException.class, () -> q.sendMessage("x"));
        assertEquals(404, e.getStatusCode());
        assertEquals(QueueErrorCode.QUEUE_NOT_FOUND, e.getErrorCode());
    }
}
