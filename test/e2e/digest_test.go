package e2e

import (
	"bytes"
	"encoding/binary"
	"hash/crc64"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/appendblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
)

// The service's CRC-64 (x-ms-content-crc64).
var azCRC64 = crc64.MakeTable(0x9A6C9329AC4BC9B5)

func TestTransactionalCRC64(t *testing.T) {
	e := start(t)
	e.container("crc")
	bb := e.c.ServiceClient().NewContainerClient("crc").NewBlockBlobClient("b")
	data := bytes.Repeat([]byte("crc64 body "), 10000) // above the inline threshold
	id := "YmxvY2stMDAwMQ=="
	resp, err := bb.StageBlock(e.ctx, id, btBody(data), &blockblob.StageBlockOptions{TransactionalValidation: blob.TransferValidationTypeComputeCRC64()})
	must(t, err)
	want := binary.LittleEndian.AppendUint64(nil, crc64.Checksum(data, azCRC64))
	if !bytes.Equal(resp.ContentCRC64, want) {
		t.Fatalf("echoed crc64 %x, want %x", resp.ContentCRC64, want)
	}
	if resp.ContentMD5 != nil {
		t.Fatalf("unrequested Content-MD5 %x", resp.ContentMD5)
	}
	// A wrong CRC64 is 400 Crc64Mismatch and stages nothing.
	_, err = bb.StageBlock(e.ctx, "YmxvY2stMDAwMg==", btBody(data), &blockblob.StageBlockOptions{TransactionalValidation: blob.TransferValidationTypeCRC64(12345)})
	wantCode(t, err, 400, bloberror.Code("Crc64Mismatch"))
	bl, err := bb.GetBlockList(e.ctx, blockblob.BlockListTypeUncommitted, nil)
	must(t, err)
	if len(bl.UncommittedBlocks) != 1 || *bl.UncommittedBlocks[0].Name != id {
		t.Fatalf("uncommitted blocks after a failed CRC64: %d", len(bl.UncommittedBlocks))
	}

	// Append Block with a precomputed CRC64, right and wrong.
	ab := e.c.ServiceClient().NewContainerClient("crc").NewAppendBlobClient("a")
	_, err = ab.Create(e.ctx, nil)
	must(t, err)
	small := []byte("append me")
	_, err = ab.AppendBlock(e.ctx, btBody(small), &appendblob.AppendBlockOptions{TransactionalValidation: blob.TransferValidationTypeCRC64(crc64.Checksum(small, azCRC64))})
	must(t, err)
	_, err = ab.AppendBlock(e.ctx, btBody(small), &appendblob.AppendBlockOptions{TransactionalValidation: blob.TransferValidationTypeCRC64(1)})
	wantCode(t, err, 400, bloberror.Code("Crc64Mismatch"))
	p, err := ab.GetProperties(e.ctx, nil)
	must(t, err)
	if *p.ContentLength != int64(len(small)) {
		t.Fatalf("append blob length %d after a failed CRC64", *p.ContentLength)
	}
}
