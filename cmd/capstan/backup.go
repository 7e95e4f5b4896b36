package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/backup"
	"github.com/capstan-dev/capstan/cypher"
	"github.com/capstan-dev/capstan/embedded"
	"github.com/capstan-dev/capstan/secret"
	"github.com/capstan-dev/capstan/server"
)

// backupFunc is what GET /admin/backup writes: the store's dump of the
// organization and, on the embedded store, its secrets from the file
// (on Neo4j they are in the database's dump).
func backupFunc(store capstan.Store, kind string) func(*secret.Vault) server.BackupFunc {
	return func(vault *secret.Vault) server.BackupFunc {
		dumper, ok := store.(capstan.Dumper)
		if !ok {
			return nil
		}
		file, _ := vault.Store.(*secret.FileStore)
		return func(ctx context.Context, org string, w io.Writer) error {
			m := backup.Manifest{Release: buildVersion(), Store: kind, Schema: schemaLevel(ctx, store), Organization: org}
			_, err := backup.Write(ctx, w, m, func(ctx context.Context, emit func(capstan.BackupRecord) error) error {
				if err := dumper.Dump(ctx, org, emit); err != nil {
					return err
				}
				if file != nil {
					return file.SealedRecords(org, emit)
				}
				return nil
			})
			return err
		}
	}
}

// schemaLevel is the store's migration level (0 when it has none).
func schemaLevel(ctx context.Context, store capstan.Store) int {
	if s, ok := store.(interface {
		SchemaLevel(context.Context) (int, error)
	}); ok {
		if n, err := s.SchemaLevel(ctx); err == nil {
			return n
		}
	}
	return 0
}

// backupCmd asks a running server for a backup of the token's
// organization and writes it to a file: into a temporary file beside
// it, checked whole, then linked to its name, so FILE is a whole backup
// or absent, and an existing file is never replaced.
func backupCmd(args []string, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("backup", flag.ContinueOnError)
	fset.SetOutput(stderr)
	srv := fset.String("server", envOr("CAPSTAN_SERVER", "http://127.0.0.1:8080"), "Capstan server URL (CAPSTAN_SERVER)")
	token := fset.String("token", os.Getenv("CAPSTAN_TOKEN"), "an admin's bearer token: the backup holds its organization (CAPSTAN_TOKEN)")
	to := fset.String("to", "", "the backup file to write (required; refused when it exists)")
	fset.Usage = func() {
		fmt.Fprintln(stderr, "usage: capstan backup --to FILE [--server URL] [--token TOKEN]")
		fset.PrintDefaults()
	}
	if err := fset.Parse(args); err != nil {
		return 2
	}
	if *to == "" || fset.NArg() > 0 {
		fset.Usage()
		return 2
	}
	if *token == "" {
		fmt.Fprintln(stderr, "capstan backup: no token: pass --token or set CAPSTAN_TOKEN (an admin's)")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	sum, size, err := fetchBackup(ctx, strings.TrimRight(*srv, "/"), *token, *to)
	if err != nil {
		fmt.Fprintf(stderr, "capstan backup: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "backup of organization %s written to %s: %s, %d records (%s), taken from the %s store at schema %d by capstan %s in %s\n",
		sum.Manifest.Organization, *to, bytesText(size), sum.End.Records, kindsText(sum.End.Kinds), sum.Manifest.Store,
		sum.Manifest.Schema, sum.Manifest.Release, time.Since(start).Round(time.Millisecond))
	return 0
}

func fetchBackup(ctx context.Context, url, token, to string) (backup.Summary, int64, error) {
	if _, err := os.Stat(to); err == nil {
		return backup.Summary{}, 0, fmt.Errorf("%s exists: choose a new file", to)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/admin/backup", nil)
	if err != nil {
		return backup.Summary{}, 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return backup.Summary{}, 0, fmt.Errorf("cannot reach Capstan at %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return backup.Summary{}, 0, fmt.Errorf("%s refused the backup: %s", url, responseError(resp))
	}
	tmp, err := os.CreateTemp(filepath.Dir(to), "."+filepath.Base(to)+".*")
	if err != nil {
		return backup.Summary{}, 0, err
	}
	defer os.Remove(tmp.Name()) // the file stays under its final name
	size, err := io.Copy(tmp, resp.Body)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return backup.Summary{}, 0, fmt.Errorf("the backup was cut off after %s: %v", bytesText(size), err)
	}
	sum, err := verifyFile(ctx, tmp.Name())
	if err != nil {
		return backup.Summary{}, 0, fmt.Errorf("the server's answer is not a whole backup (see its log): %v", capstan.ErrorMessage(err))
	}
	// A link fails when the name exists: a file that appeared meanwhile
	// (another run's) is never replaced.
	if err := os.Link(tmp.Name(), to); err != nil {
		return backup.Summary{}, 0, fmt.Errorf("%s: %v", to, err)
	}
	if d, err := os.Open(filepath.Dir(to)); err == nil {
		d.Sync()
		d.Close()
	}
	return sum, size, nil
}

// responseError is the message of an error answer, or its status.
func responseError(resp *http.Response) string {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var e struct {
		Errors []struct {
			Message    string         `json:"message"`
			Extensions map[string]any `json:"extensions"`
		} `json:"errors"`
	}
	if jsonErr := json.Unmarshal(body, &e); jsonErr == nil && len(e.Errors) > 0 {
		return fmt.Sprintf("%v: %s", e.Errors[0].Extensions["code"], e.Errors[0].Message)
	}
	return resp.Status
}

func verifyFile(ctx context.Context, path string) (backup.Summary, error) {
	f, err := os.Open(path)
	if err != nil {
		return backup.Summary{}, err
	}
	defer f.Close()
	return backup.Verify(ctx, f)
}

// restoreCmd loads a backup into a store that does not hold its
// organization: the store of either kind, named by capstan serve's
// store flags. It checks the whole file, and that the secret key opens
// the backup's secrets, before it writes anything.
func restoreCmd(args []string, stdout, stderr io.Writer) int {
	var c serveConfig
	fset := flag.NewFlagSet("restore", flag.ContinueOnError)
	fset.SetOutput(stderr)
	addStoreFlags(fset, &c)
	from := fset.String("from", "", "the backup file to restore (required)")
	timeout := fset.Duration("timeout", time.Hour, "give up (writing nothing that is not already undone) after this long: a file built to cost time is stopped")
	fset.Usage = func() {
		fmt.Fprintln(stderr, "usage: capstan restore --from FILE [store flags, as capstan serve's]")
		fset.PrintDefaults()
	}
	if err := fset.Parse(args); err != nil {
		return 2
	}
	if *from == "" || fset.NArg() > 0 {
		fset.Usage()
		return 2
	}
	storeDefaults(&c)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	start := time.Now()
	sum, err := restore(ctx, c, *from)
	if err != nil {
		fmt.Fprintf(stderr, "capstan restore: %v\n", capstan.ErrorMessage(err))
		return 1
	}
	fmt.Fprintf(stdout, "organization %s restored into the %s store: %d records (%s), from a backup of the %s store by capstan %s taken %s, in %s\n",
		sum.Manifest.Organization, c.store, sum.End.Records, kindsText(sum.End.Kinds), sum.Manifest.Store, sum.Manifest.Release,
		sum.Manifest.CreatedAt.Format(time.RFC3339), time.Since(start).Round(time.Millisecond))
	return 0
}

func restore(ctx context.Context, c serveConfig, from string) (backup.Summary, error) {
	sum, err := verifyFile(ctx, from)
	if err != nil {
		return sum, err
	}
	known := map[string][]capstan.Migration{"embedded": embedded.Migrations(), "neo4j": cypher.Migrations()}[sum.Manifest.Store]
	if err := capstan.CheckSchemaLevel(sum.Manifest.Store+" store of the backup", sum.Manifest.Schema, known); err != nil {
		return sum, err
	}
	key, err := restoreKey(c, sum)
	if err != nil {
		return sum, err
	}
	store, err := openStore(c, slog.New(slog.DiscardHandler))
	if err != nil {
		return sum, err
	}
	defer store.Close()
	restorer, ok := store.(capstan.Restorer)
	if !ok {
		return sum, capstan.Errorf(capstan.EINVALID, "the %s store cannot restore backups", c.store)
	}
	target := backup.Target{Store: restorer}
	if records, shared := store.(secret.Records); shared {
		if len(sum.Secrets) > 0 {
			if err := secret.NewDB(records, key).CheckKey(ctx); err != nil {
				return sum, err
			}
		}
	} else {
		file, err := secret.OpenFile(c.secretStore, key)
		if err != nil {
			return sum, err
		}
		target.Secrets = file
	}
	f, err := os.Open(from)
	if err != nil {
		return sum, err
	}
	defer f.Close()
	return backup.Load(ctx, f, target)
}

// restoreKey is the secret key the restored store will use: it must open
// the backup's secrets. A key file that does not exist is made only when
// the backup holds no secret (a new key could not open them).
func restoreKey(c serveConfig, sum backup.Summary) ([]byte, error) {
	if len(sum.Secrets) > 0 && os.Getenv("CAPSTAN_SECRET_KEY") == "" {
		if _, err := os.Stat(c.secretKeyFile); errors.Is(err, fs.ErrNotExist) {
			return nil, capstan.Errorf(capstan.EINVALID, "the backup holds secrets, and there is no secret key at %s: give the key of the server that took the backup (CAPSTAN_SECRET_KEY or --secret-key-file)", c.secretKeyFile)
		}
	}
	key, err := secret.LoadKey("CAPSTAN_SECRET_KEY", c.secretKeyFile)
	if err != nil {
		return nil, err
	}
	for _, rec := range sum.Secrets {
		if err := secret.OpensRecord(key, sum.Manifest.Organization, rec.Key, rec.Data); err != nil {
			return nil, err
		}
	}
	return key, nil
}

func kindsText(kinds map[string]int64) string {
	var parts []string
	for _, k := range capstan.BackupKinds {
		if n := kinds[k]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, k))
		}
	}
	for k, n := range kinds {
		if !slices.Contains(capstan.BackupKinds, k) {
			parts = append(parts, fmt.Sprintf("%d %s", n, k))
		}
	}
	return strings.Join(parts, ", ")
}

func bytesText(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
