import { SUPPORTED_MEDIA } from '@switchboard/proto';
import { describe, expect, it } from 'vitest';
import { isActiveContent, servedType } from './served-type.ts';

describe('isActiveContent', () => {
  it('names what a browser renders or runs, by the parts of the type', () => {
    for (const t of [
      'text/html',
      'TEXT/HTML',
      'application/xhtml+xml',
      'image/svg+xml',
      'application/rss+xml',
      'text/xml',
      'application/xml',
      'text/xsl',
      'application/xslt+xml',
      'application/javascript',
      'text/ecmascript',
      'application/x-javascript',
      'multipart/form-data',
    ])
      expect([t, isActiveContent(t)]).toEqual([t, true]);
  });

  it('serves every type the network takes, Office documents included, as itself', () => {
    for (const { mimeTypes } of Object.values(SUPPORTED_MEDIA))
      for (const t of mimeTypes) expect([t, isActiveContent(t)]).toEqual([t, false]);
    expect(isActiveContent('application/octet-stream')).toBe(false);
  });
});

describe('servedType', () => {
  const docx = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
  it('answers the stored type, or the one asked for', () => {
    expect(servedType(docx, {})).toEqual({ ok: true, type: docx });
    expect(servedType('image/png', { subtype: 'x-png' })).toEqual({ ok: true, type: 'image/x-png' });
    expect(servedType('image/png', { type: 'application', subtype: 'octet-stream' })).toEqual({
      ok: true,
      type: 'application/octet-stream',
    });
  });

  it('refuses an override a browser would run, and serves such a stored type as bytes', () => {
    expect(servedType('text/plain', { type: 'text', subtype: 'html' })).toEqual({
      ok: false,
      type: 'text/html',
    });
    expect(servedType('image/png', { subtype: 'svg+xml' })).toEqual({ ok: false, type: 'image/svg+xml' });
    expect(servedType('text/html', {})).toEqual({ ok: true, type: 'application/octet-stream' });
  });
});
