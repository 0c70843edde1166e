// Bundles src/main.tsx with esbuild into dist/ (index.html, main.js, main.css, fonts),
// which the Perses server embeds in place of upstream's app (ui/app/dist).
import { build } from 'esbuild';
import { copyFileSync, mkdirSync } from 'node:fs';

const out = process.argv[2] ?? 'dist';

// One copy of each package: some CommonJS builds require() a package that others import
// (@tanstack/react-query has both builds), and two copies of React Query mean two contexts
// ("No QueryClient set"). Every bare require() resolves as an import does, to the ES build.
const esmOnly = {
  name: 'esm-only',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, async (args) => {
      if (args.kind !== 'require-call' || args.pluginData?.esmOnly) return undefined;
      const found = await b.resolve(args.path, {
        kind: 'import-statement',
        importer: args.importer,
        resolveDir: args.resolveDir,
        pluginData: { esmOnly: true },
      });
      // Built-ins (seedrandom's optional `crypto`) and misses: esbuild's own answer.
      return found.errors.length || !found.path.startsWith('/') ? undefined : found;
    });
  },
};
mkdirSync(out, { recursive: true });
await build({
  entryPoints: ['src/main.tsx'],
  bundle: true,
  minify: true,
  format: 'esm',
  target: 'es2020',
  outdir: out,
  jsx: 'automatic',
  loader: { '.woff': 'file', '.woff2': 'file', '.ttf': 'file', '.svg': 'file', '.png': 'file' },
  define: { 'process.env.NODE_ENV': '"production"', global: 'globalThis' },
  legalComments: 'linked',
  logLevel: 'warning',
  plugins: [esmOnly],
});
copyFileSync('index.html', `${out}/index.html`);
