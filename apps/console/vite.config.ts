import { defineConfig } from 'vite';

// The console is served by the gateway at /console (services/gateway/src/console), under a strict
// CSP: every script and style is a file of the build, nothing is inlined, nothing comes from elsewhere.
export default defineConfig({
  base: '/console/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // Small images may be inlined as data: URLs (the CSP's img-src allows them); nothing else is.
    assetsInlineLimit: (file) => file.endsWith('.svg') || file.endsWith('.png'),
    modulePreload: { polyfill: false },
    sourcemap: false,
    reportCompressedSize: false,
  },
});
