/**
 * One operation's HTTP request from a method's argument: the URL (path and query parameters) and a
 * body made afresh for every attempt, so a retry never sends a stream the first attempt consumed
 * (a multipart upload builds a new FormData from the same bytes each time).
 */
import type { OperationInfo } from './operation-info.ts';

type ParamValue = unknown;

/**
 * A path parameter, each `/`-separated part percent-encoded (a resolver's link path keeps its
 * slashes). A `.` or `..` part is refused: URLs resolve them (even as %2E), so they would move the
 * request to another path.
 */
function encodePathValue(name: string, value: ParamValue): string {
  return String(value)
    .split('/')
    .map((segment) => {
      if (segment === '.' || segment === '..')
        throw new TypeError(`The path parameter "${name}" may not hold a "${segment}" segment.`);
      return encodeURIComponent(segment);
    })
    .join('/');
}

function appendQuery(search: URLSearchParams, name: string, value: ParamValue): void {
  if (value === undefined || value === null) return;
  if (Array.isArray(value)) {
    for (const item of value) appendQuery(search, name, item);
    return;
  }
  search.append(name, value instanceof Date ? value.toISOString() : String(value));
}

/** The request URL: `baseUrl` (with any path of its own), the operation's path with its parameters, the query. */
export function requestUrl(baseUrl: string, info: OperationInfo, params: Record<string, ParamValue>): string {
  let path = info.path;
  for (const name of info.pathParams) {
    const value = params[name];
    if (value === undefined || value === null || value === '') {
      throw new TypeError(`Missing path parameter "${name}" for ${info.method} ${info.path}.`);
    }
    path = path.replace(`{${name}}`, encodePathValue(name, value));
  }
  const base = baseUrl.endsWith('/') ? baseUrl.replace(/\/+$/, '') : baseUrl;
  // Most operations take no query (verify, generate): no URLSearchParams made for them.
  if (info.queryParams.length === 0) return `${base}${path}`;
  const search = new URLSearchParams();
  for (const name of info.queryParams) appendQuery(search, name, params[name]);
  const query = search.toString();
  return `${base}${path}${query ? `?${query}` : ''}`;
}

/** The fields of the argument that belong in the body (neither a path nor a query parameter). */
function bodyFields(info: OperationInfo, params: Record<string, ParamValue>): Record<string, ParamValue> {
  const fields: Record<string, ParamValue> = {};
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined || info.pathParams.includes(name) || info.queryParams.includes(name)) continue;
    fields[name] = value;
  }
  return fields;
}

function asBlob(value: ParamValue, type: string | undefined): Blob {
  if (value instanceof Blob) return value;
  if (value instanceof Uint8Array || value instanceof ArrayBuffer) {
    return new Blob([value as Uint8Array<ArrayBuffer> | ArrayBuffer], type ? { type } : {});
  }
  if (typeof value === 'string') return new Blob([value], type ? { type } : {});
  throw new TypeError('A file must be a Blob, a Uint8Array, an ArrayBuffer or a string.');
}

/** The body and its content type for one attempt; `FormData` sets its own content type (with the boundary). */
export function requestBody(
  info: OperationInfo,
  params: Record<string, ParamValue>,
): { body: RequestInit['body']; contentType: string | undefined } {
  switch (info.body) {
    case 'none':
      return { body: undefined, contentType: undefined };
    case 'fields':
      return { body: JSON.stringify(bodyFields(info, params)), contentType: 'application/json' };
    case 'json':
      return params.body === undefined
        ? { body: undefined, contentType: undefined }
        : { body: JSON.stringify(params.body), contentType: 'application/json' };
    case 'form': {
      const form = new URLSearchParams();
      for (const [name, value] of Object.entries(bodyFields(info, params))) appendQuery(form, name, value);
      return { body: form.toString(), contentType: 'application/x-www-form-urlencoded' };
    }
    case 'multipart': {
      const form = new FormData();
      for (const [name, value] of Object.entries(bodyFields(info, params))) {
        if (info.fileFields.includes(name)) {
          const blob = asBlob(value, undefined);
          form.append(name, blob, value instanceof File ? value.name : name);
        } else {
          form.append(name, String(value));
        }
      }
      return { body: form, contentType: undefined };
    }
    case 'raw': {
      const value = params.body;
      if (typeof value === 'string') return { body: value, contentType: info.contentType ?? 'application/octet-stream' };
      const blob = asBlob(value, undefined);
      return { body: blob, contentType: blob.type || info.contentType || 'application/octet-stream' };
    }
  }
}
