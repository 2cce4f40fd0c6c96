import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..');
const PAGES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => join('docs', f))];

/** The text of a page outside its fenced code blocks and inline code, where links are links. */
function prose(text: string): string {
  return text.replace(/^(`{3,})[^\n]*\n[\s\S]*?^\1\s*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchors of a page's headings: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  const headings = text.replace(/^(`{3,})[^\n]*\n[\s\S]*?^\1\s*$/gm, '').match(/^#{1,6} .+$/gm) ?? [];
  for (const heading of headings) {
    const slug = heading.replace(/^#+ /, '').trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}

describe('relative links in README.md and docs/*.md', () => {
  it.each(PAGES)('%s: every relative link names a file that exists, and a heading of it', (page) => {
    const broken: string[] = [];
    for (const [, target] of prose(readFileSync(join(ROOT, page), 'utf8')).matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/i.test(target)) continue;
      const [path, anchor] = target.split('#');
      const file = path === '' ? join(ROOT, page) : join(ROOT, dirname(page), decodeURIComponent(path));
      if (!existsSync(file)) broken.push(`${target}: no file ${relative(ROOT, file)}`);
      else if (anchor !== undefined && file.endsWith('.md') && !anchorsOf(readFileSync(file, 'utf8')).has(anchor)) broken.push(`${target}: no heading #${anchor} in ${relative(ROOT, file)}`);
    }
    expect(broken).toEqual([]);
  });
});
