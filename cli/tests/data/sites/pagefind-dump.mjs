// Prints what Pagefind itself indexes of the site in the directory given as the first
// argument: each indexed page's URL, text, metadata and filters (from its fragment), as
// JSON sorted by URL. Used by regenerate.sh to record pagefind.expected.json.
import * as pagefind from "pagefind";
import zlib from "node:zlib";

const { index } = await pagefind.createIndex({});
const { errors } = await index.addDirectory({ path: process.argv[2] });
if (errors.length) throw new Error(errors.join("\n"));
const { files } = await index.getFiles();
const pages = [];
for (const f of files) {
  if (!f.path.startsWith("fragment/")) continue;
  const text = zlib.gunzipSync(Buffer.from(f.content)).toString("utf8");
  // A fragment is a signature followed by the page's JSON.
  const { url, content, meta, filters } = JSON.parse(text.slice(text.indexOf("{")));
  pages.push({ url, content, meta, filters });
}
pages.sort((a, b) => a.url.localeCompare(b.url));
console.log(JSON.stringify(pages, null, 2));
await pagefind.close();
