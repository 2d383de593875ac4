-- The ordered key-value table behind kv.Store. bytea compares bytewise
-- (memcmp, then length), the order the kv contract needs.
CREATE TABLE IF NOT EXISTS kv (
    key   bytea PRIMARY KEY,
    value bytea NOT NULL
);
