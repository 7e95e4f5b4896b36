// Builds the offline GraphiQL bundle embedded by the Go server (go:embed).
//
//   npm ci && node build.mjs
//
// Output (relative to the repository root):
//   server/graphiql/index.html          (copied from src/index.html)
//   server/graphiql/assets/graphiql.js  (minified IIFE, React + GraphiQL + graphql-ws)
//   server/graphiql/assets/graphiql.css (all styles, fonts inlined as data: URIs)
//
// The build is deterministic: no sourcemaps, no timestamps, no hashes in names.
import * as esbuild from 'esbuild';
import { copyFile, mkdir, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const outRoot = path.resolve(here, '../../server/graphiql');
const assetsDir = path.join(outRoot, 'assets');

// Start from a clean assets directory so no stale files get embedded.
await rm(assetsDir, { recursive: true, force: true });
await mkdir(assetsDir, { recursive: true });

await esbuild.build({
  absWorkingDir: here,
  entryPoints: { graphiql: 'src/index.jsx' },
  outdir: assetsDir,
  bundle: true,
  format: 'iife',
  platform: 'browser',
  target: 'es2020',
  minify: true,
  sourcemap: false,
  legalComments: 'eof',
  jsx: 'automatic',
  define: { 'process.env.NODE_ENV': '"production"' },
  // Any url() in CSS that is not already a data: URI gets inlined too.
  loader: {
    '.woff': 'dataurl',
    '.woff2': 'dataurl',
    '.ttf': 'dataurl',
    '.svg': 'dataurl',
    '.png': 'dataurl',
  },
  logLevel: 'info',
});

await copyFile(path.join(here, 'src/index.html'), path.join(outRoot, 'index.html'));

const files = (await readdir(assetsDir)).sort();
const expected = ['graphiql.css', 'graphiql.js'];
if (JSON.stringify(files) !== JSON.stringify(expected)) {
  throw new Error(`unexpected assets: ${files.join(', ')} (want ${expected.join(', ')})`);
}
