-- One row per chunk, committed or not (Walk lists them for Sweep), and its
-- bytes in parts of at most 1 MiB: part seq holds bytes
-- [seq * 1048576, seq * 1048576 + length(data)) of the chunk; every part
-- but the last is full.
CREATE TABLE IF NOT EXISTS chunk (
    id        text PRIMARY KEY,
    size      bigint NOT NULL DEFAULT 0,
    committed boolean NOT NULL DEFAULT false,
    modified  timestamptz NOT NULL
);

CREATE TABLE IF NOT EXISTS chunk_part (
    id   text NOT NULL,
    seq  int NOT NULL,
    data bytea NOT NULL,
    PRIMARY KEY (id, seq)
);
