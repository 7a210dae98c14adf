// The tests render and translate in both languages, as the server does: both message tables
// are registered up front (the browser loads the Chinese one on demand: src/i18n/index.ts).
import { registerMessages } from '../src/i18n';
import { zh } from '../src/i18n/zh';

registerMessages('zh', zh);
