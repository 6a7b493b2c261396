// skv with its values kept in the tables: the same engine and options as engine-skv.js, opened
// with `valueLog: false`, so every value is stored (and compressed) in table blocks as it was
// before the browser turned key-value separation on by default (docs/web.md, "The value log").

import { openSkv } from './engine-skv.js';

export function openEngine(config) {
  return openSkv(config, 'skv (no value log)', { valueLog: false });
}
