package backup_test

import (
	"bytes"
	"compress/gzip"
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
