/**
 * A generated Android export of `lines` lines (en-GB, 24-hour): mostly one-line texts, some
 * multi-line messages, attachments with captions, omitted media and a system notice, from two
 * senders (one a formatted number), one minute apart on average.
 */
export function generateExport(lines: number): string {
  const out: string[] = [];
  let at = Date.UTC(2022, 0, 1, 8, 0);
  let i = 0;
  const pad = (n: number) => String(n).padStart(2, '0');
  while (out.length < lines) {
    i++;
    at += ((i * 7919) % 120) * 1000;
    const d = new Date(at);
    const header = `${pad(d.getUTCDate())}/${pad(d.getUTCMonth() + 1)}/${d.getUTCFullYear()}, ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())} - `;
    const sender = i % 3 === 0 ? 'Corner Shop' : '\u202A+44\u00A07700\u00A0900123\u202C';
    const stamp = `${d.getUTCFullYear()}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}`;
    if (i % 997 === 0) out.push(`${header}Messages and calls are end-to-end encrypted. Tap to learn more.`);
    else if (i % 50 === 0)
      out.push(
        `${header}${sender}: IMG-${stamp}-WA${String(i % 10000).padStart(4, '0')}.jpg (file attached)`,
        'the receipt',
      );
    else if (i % 40 === 0) out.push(`${header}${sender}: <Media omitted>`);
    else if (i % 10 === 0)
      out.push(`${header}${sender}: message ${i} first line`, `second line of ${i}`, 'third line');
    else
      out.push(`${header}${sender}: message number ${i}, with some words: see you at ${pad(i % 24)}:00 👍`);
  }
  return `${out.slice(0, lines).join('\n')}\n`;
}
