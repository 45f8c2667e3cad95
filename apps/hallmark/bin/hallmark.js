#!/usr/bin/env node
// Runs the bundle the install made of the TypeScript sources while it is as new as they are
// (cli-bundle.js), else the sources themselves through tsx: no build step between a clone, or an
// edit, and a running product.
import { freshCliBundle } from './cli-bundle.js';

const bundle = freshCliBundle();
if (bundle) {
  // HALLMARK_DEBUG prints stacks: name the source files in them, not the bundle's chunks.
  if (process.env.HALLMARK_DEBUG) process.setSourceMapsEnabled(true);
  await import(bundle);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli.ts');
}
