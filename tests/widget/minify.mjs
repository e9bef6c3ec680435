// Makes widget/chat-widget.min.js, the file site owners host: widget/chat-widget.js with
// comments dropped and local names shortened (terser), nothing else changed. The readable
// file stays the source; size.test.mjs fails when the two differ or the result outgrows
// its budget.
// Run: cd tests/widget && node minify.mjs --write
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { minify } from 'terser';

const widget = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../widget');
export const SOURCE = path.join(widget, 'chat-widget.js');
export const MINIFIED = path.join(widget, 'chat-widget.min.js');

// The minified text of the widget, deterministic for a given terser version. The /*! header
// (what the file is, its safety rule) is kept.
export async function minified() {
  const out = await minify(fs.readFileSync(SOURCE, 'utf8'), {
    ecma: 2018,
    compress: { passes: 2 },
    mangle: true,
    format: { comments: /^!/, ascii_only: false },
  });
  return out.code + '\n';
}

if (process.argv.includes('--write')) {
  fs.writeFileSync(MINIFIED, await minified());
  console.log(`wrote ${MINIFIED}`);
}
