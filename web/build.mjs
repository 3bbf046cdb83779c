/**
 * Builds the dashboard into dist/web: one ES module bundle (plus lazily loaded chunks) and one
 * stylesheet under static/ with content hashes in their names (cached for a year), an index.html
 * that names them (revalidated on every load), and .br/.gz twins of every text file so the daemon
 * serves compressed bytes without compressing per request. No CDN: everything is local.
 */
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const out = path.resolve(here, '..', 'dist', 'web');
const dev = process.argv.includes('--dev');

fs.rmSync(out, { recursive: true, force: true });
fs.mkdirSync(path.join(out, 'static'), { recursive: true });

const result = await build({
  entryPoints: { app: path.join(here, 'src', 'main.tsx') },
  bundle: true,
  splitting: true,
  format: 'esm',
  target: ['es2022', 'chrome110', 'firefox115', 'safari16'],
  outdir: path.join(out, 'static'),
  entryNames: '[name]-[hash]',
  chunkNames: 'chunk-[hash]',
  assetNames: '[name]-[hash]',
  minify: !dev,
  sourcemap: dev ? 'inline' : false,
  metafile: true,
  jsx: 'automatic',
  jsxImportSource: 'preact',
  legalComments: 'none',
  define: { 'process.env.NODE_ENV': dev ? '"development"' : '"production"' },
  logLevel: 'warning',
});

const outputs = Object.entries(result.metafile.outputs);
const rel = (p) => '/' + path.relative(out, path.resolve(p)).split(path.sep).join('/');
const js = outputs.find(([, o]) => o.entryPoint && o.entryPoint.endsWith('main.tsx'));
const css = outputs.find(([p]) => p.endsWith('.css'));
if (!js) throw new Error('build: no JS entry output');

// The icon is content-addressed like the bundles.
const icon = fs.readFileSync(path.join(here, 'icon.svg'));
const iconName = `icon-${createHash('sha256').update(icon).digest('hex').slice(0, 8)}.svg`;
fs.writeFileSync(path.join(out, 'static', iconName), icon);

const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>osm</title>
<link rel="icon" type="image/svg+xml" href="/static/${iconName}">
${css ? `<link rel="stylesheet" href="${rel(css[0])}">\n` : ''}<script type="module" src="${rel(js[0])}"></script>
</head>
<body>
<div id="app"><noscript>The osm dashboard needs JavaScript.</noscript></div>
</body>
</html>
`;
fs.writeFileSync(path.join(out, 'index.html'), html);

// Pre-compressed twins (brotli at its best, gzip -9): built once, served by @fastify/static.
let raw = 0;
let br = 0;
const walk = (dir) => fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)]));
for (const file of walk(out)) {
  if (!/\.(js|css|html|svg|json)$/.test(file)) continue;
  const data = fs.readFileSync(file);
  const b = zlib.brotliCompressSync(data, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: data.length } });
  fs.writeFileSync(`${file}.br`, b);
  fs.writeFileSync(`${file}.gz`, zlib.gzipSync(data, { level: 9 }));
  raw += data.length;
  br += b.length;
}
if (!process.argv.includes('--quiet')) console.log(`dashboard built into ${path.relative(process.cwd(), out) || out}: ${(raw / 1024).toFixed(1)} KiB, ${(br / 1024).toFixed(1)} KiB brotli`);
