import { defineConfig, type Plugin } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const outDir = resolve(import.meta.dirname, 'dist');

// The Go binary embeds frontend/dist with //go:embed, which fails on a
// missing or empty folder, so dist/.gitkeep is committed and must survive
// builds. Vite's own emptyOutDir would delete it: clean by hand instead.
function keepGitkeep(): Plugin {
  return {
    name: 'hark-keep-gitkeep',
    apply: 'build',
    buildStart() {
      mkdirSync(outDir, { recursive: true });
      for (const name of readdirSync(outDir)) {
        if (name !== '.gitkeep') rmSync(join(outDir, name), { recursive: true, force: true });
      }
    },
    closeBundle() {
      writeFileSync(join(outDir, '.gitkeep'), '');
    },
  };
}

export default defineConfig({
  plugins: [svelte(), keepGitkeep()],
  // Relative asset URLs work under the Wails asset server and hark serve.
  base: './',
  build: {
    outDir,
    emptyOutDir: false,
    target: 'es2022',
    sourcemap: false,
    chunkSizeWarningLimit: 400,
  },
  server: {
    // `npm run dev` against a running `hark serve --addr 127.0.0.1:8765`.
    proxy: { '/api': { target: 'http://127.0.0.1:8765', changeOrigin: true } },
  },
});
