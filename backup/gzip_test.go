package backup_test

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"io"
)

func backupGunzip(w io.Writer, data []byte) error {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return err
	}
	_, err = io.Copy(w, zr)
	return err
}

func backupGzip(w io.Writer, data []byte) error {
	zw := gzip.NewWriter(w)
	if _, err := zw.Write(data); err != nil {
		return err
	}
	return zw.Close()
}

type shaWriter struct{ hash.Hash }

func sha256Writer() shaWriter { return shaWriter{sha256.New()} }

func (s shaWriter) hex() string { return hex.EncodeToString(s.Sum(nil)) }
