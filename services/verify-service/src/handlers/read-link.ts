import { HallmarkError } from '@hallmark/contracts';
import { type DigitalLink, parseDigitalLink } from '@hallmark/gs1';

/** The link of a verify or report body: exactly one of `url` and `content`, parsed, with a serial. */
export function readLink(body: {
  url?: string | undefined;
  content?: string | undefined;
}): DigitalLink & { serial: string; signature: string } {
  if ((body.url === undefined) === (body.content === undefined)) {
    throw new HallmarkError('VALIDATION_ERROR', 'Send exactly one of url and content.', {
      fields: [
        { field: body.url === undefined ? 'url' : 'content', in: 'body', message: 'exactly one of url and content is required' },
      ],
    });
  }
  const parsed = parseDigitalLink(body.url ?? body.content ?? '');
  if (!parsed.ok) throw new HallmarkError(parsed.problem.code, parsed.problem.message, parsed.problem.details);
  const { link } = parsed;
  if (link.serial === undefined) throw new HallmarkError('INVALID_URL', 'The link has no serial number (/21/).');
  return link as DigitalLink & { serial: string; signature: string };
}
