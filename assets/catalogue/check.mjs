#!/usr/bin/env node
// Validates assets/catalogue/apps.json and the icons it refers to.
// Usage: node assets/catalogue/check.mjs   (exit code 0 = valid, 1 = problems found)
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const assets = path.resolve(here, '..');
const errors = [];
const err = (m) => errors.push(m);

const CATEGORIES = ['AI', 'Metaverse', 'Game', 'Work', 'Home', 'Others', 'Z-CLOUD'];
const DISPLAY_TYPES = ['Desktop', 'Lite App', 'NAS', 'AI compute', 'Server', 'Remote desktop', 'AI server', 'Z-SERVER'];
const TIERS = ['high', 'standard', 'basic'];
const KINDS = ['own', 'rent'];
const FIELDS = ['slug', 'version', 'name', 'summary', 'description', 'icon', 'category', 'display_type', 'tier',
  'kind', 'price_per_hour', 'publisher', 'top_pick', 'requirements'];
const REQ_FIELDS = ['cpu_cores', 'memory_bytes', 'disk_bytes', 'gpu_count'];
const MIB = 1024 * 1024;
const CJK = /[\u4e00-\u9fff]/;

// ---- SVG rules shared by every icon ----
function checkSvg(rel, maxBytes = 2048) {
  const file = path.join(assets, rel);
  if (!fs.existsSync(file)) return err(`${rel}: missing`);
  const size = fs.statSync(file).size;
  const text = fs.readFileSync(file, 'utf8');
  if (size > maxBytes) err(`${rel}: ${size} bytes, over ${maxBytes}`);
  if (!/^<svg[\s>]/.test(text.trim())) err(`${rel}: does not start with <svg`);
  if (!/viewBox="0 0 64 64"/.test(text)) err(`${rel}: viewBox must be "0 0 64 64"`);
  if (!/xmlns="http:\/\/www\.w3\.org\/2000\/svg"/.test(text)) err(`${rel}: missing SVG xmlns`);
  if (/<script|\bon[a-z]+\s*=/i.test(text)) err(`${rel}: scripts or event handlers are not allowed`);
  if (/<image|<foreignObject|<use[\s>]|href\s*=|@import|url\(\s*['"]?(?!#)/i.test(text)) err(`${rel}: external or linked content`);
  if (/<style/i.test(text)) err(`${rel}: <style> is not allowed; use attributes`);
  const fonts = [...text.matchAll(/font-family="([^"]*)"/g)].map((m) => m[1]);
  for (const f of fonts) if (!/^(sans-serif|serif|monospace)$/.test(f)) err(`${rel}: font-family "${f}" is not generic`);
  if (/<text/.test(text) && fonts.length === 0) err(`${rel}: <text> without a generic font-family`);
}

// ---- catalogue ----
const catFile = path.join(here, 'apps.json');
let cat;
try {
  cat = JSON.parse(fs.readFileSync(catFile, 'utf8'));
} catch (e) {
  console.error(`apps.json: cannot parse: ${e.message}`);
  process.exit(1);
}
if (cat.version !== 1) err('top-level "version" must be 1');
if (!Array.isArray(cat.apps)) {
  console.error('apps.json: "apps" must be an array');
  process.exit(1);
}
if (cat.apps.length < 44) err(`only ${cat.apps.length} apps, need at least 44`);

const slugs = new Set();
const count = { category: {}, display_type: {}, tier: {}, kind: {} };
let topPicks = 0;
const isText = (v) => typeof v === 'string' && v.trim().length > 0;
const isBilingual = (v) => v && typeof v === 'object' && isText(v.en) && isText(v.zh);

cat.apps.forEach((a, i) => {
  const id = `apps[${i}]${a && a.slug ? ` (${a.slug})` : ''}`;
  for (const f of FIELDS) if (!(f in a)) err(`${id}: missing field "${f}"`);
  for (const f of Object.keys(a)) if (!FIELDS.includes(f)) err(`${id}: unknown field "${f}"`);

  if (!/^[a-z0-9]+(-[a-z0-9]+)*$/.test(a.slug || '')) err(`${id}: slug must be lowercase-kebab`);
  if (slugs.has(a.slug)) err(`${id}: duplicate slug`);
  slugs.add(a.slug);
  if (!isText(a.version) || /^v/i.test(a.version)) err(`${id}: version must be a non-empty string without a leading "v"`);
  if (!isText(a.publisher)) err(`${id}: publisher must be a non-empty string`);

  for (const f of ['name', 'summary', 'description']) {
    if (!isBilingual(a[f])) { err(`${id}: ${f} needs non-empty "en" and "zh"`); continue; }
    if (!CJK.test(a[f].zh) && f !== 'name') err(`${id}: ${f}.zh contains no Chinese text`);
    if (CJK.test(a[f].en)) err(`${id}: ${f}.en contains Chinese text`);
  }
  if (isBilingual(a.summary)) {
    if (a.summary.en.length > 90) err(`${id}: summary.en is ${a.summary.en.length} chars (max 90)`);
    if (a.summary.zh.length > 45) err(`${id}: summary.zh is ${a.summary.zh.length} chars (max 45)`);
  }
  if (isBilingual(a.description)) {
    const sentences = a.description.en.split(/(?<=[.!?])\s+(?=[A-Z0-9`])/).length;
    if (sentences < 2 || sentences > 4) err(`${id}: description.en has ${sentences} sentences (want 2-4)`);
  }

  if (a.icon !== `icons/apps/${a.slug}.svg`) err(`${id}: icon must be "icons/apps/${a.slug}.svg"`);
  else checkSvg(a.icon);

  if (!CATEGORIES.includes(a.category)) err(`${id}: bad category "${a.category}"`);
  if (!DISPLAY_TYPES.includes(a.display_type)) err(`${id}: bad display_type "${a.display_type}"`);
  if (!TIERS.includes(a.tier)) err(`${id}: bad tier "${a.tier}"`);
  if (!KINDS.includes(a.kind)) err(`${id}: bad kind "${a.kind}"`);
  for (const k of Object.keys(count)) count[k][a[k]] = (count[k][a[k]] || 0) + 1;

  if (!Number.isInteger(a.price_per_hour) || a.price_per_hour < 0) err(`${id}: price_per_hour must be an integer >= 0`);
  if (a.kind === 'rent' && !(a.price_per_hour > 0)) err(`${id}: rent apps need price_per_hour > 0`);
  if (typeof a.top_pick !== 'boolean') err(`${id}: top_pick must be a boolean`);
  if (a.top_pick) topPicks++;

  const r = a.requirements || {};
  for (const f of REQ_FIELDS) if (!Number.isSafeInteger(r[f])) err(`${id}: requirements.${f} must be an integer`);
  for (const f of Object.keys(r)) if (!REQ_FIELDS.includes(f) && f !== 'cuda') err(`${id}: unknown requirements field "${f}"`);
  // The lowest CUDA version the image runs on, for apps that need GPUs (docs/gpus.md).
  if ('cuda' in r && !(typeof r.cuda === 'string' && /^\d{1,3}\.\d{1,3}$/.test(r.cuda) && r.gpu_count > 0)) err(`${id}: requirements.cuda must be "major.minor" on an app that needs GPUs`);
  if (r.cpu_cores < 1) err(`${id}: cpu_cores must be >= 1`);
  if (r.gpu_count < 0) err(`${id}: gpu_count must be >= 0`);
  for (const f of ['memory_bytes', 'disk_bytes']) {
    if (!(r[f] >= 256 * MIB)) err(`${id}: requirements.${f} looks too small`);
    if (r[f] % MIB !== 0) err(`${id}: requirements.${f} is not a whole number of MiB (powers of 1024)`);
  }
});

for (const c of CATEGORIES) if ((count.category[c] || 0) < 3) err(`category ${c}: ${count.category[c] || 0} apps, need at least 3`);
for (const d of DISPLAY_TYPES) if (!count.display_type[d]) err(`display_type ${d}: no app`);
for (const t of TIERS) if (!count.tier[t]) err(`tier ${t}: no app`);
for (const k of KINDS) if (!count.kind[k]) err(`kind ${k}: no app`);
if (topPicks < 8 || topPicks > 10) err(`${topPicks} top picks, want 8-10`);

// ---- other icons ----
checkSvg('icons/favicon.svg');
for (const c of [...CATEGORIES, 'top_picks']) checkSvg(`icons/category/${c.toLowerCase()}.svg`);
const iconDir = path.join(assets, 'icons/apps');
if (fs.existsSync(iconDir)) {
  for (const f of fs.readdirSync(iconDir)) {
    if (!slugs.has(f.replace(/\.svg$/, ''))) err(`icons/apps/${f}: no app with this slug`);
  }
}

// ---- report ----
console.log(`apps: ${cat.apps.length}, top picks: ${topPicks}`);
for (const k of Object.keys(count)) {
  console.log(`${k}: ` + Object.entries(count[k]).map(([n, v]) => `${n}=${v}`).join(', '));
}
if (errors.length) {
  for (const e of errors) console.error('ERROR ' + e);
  console.error(`${errors.length} problem(s) found`);
  process.exit(1);
}
console.log('catalogue OK');
