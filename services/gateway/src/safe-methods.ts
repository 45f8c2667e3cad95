/** HTTP methods that change nothing (RFC 9110, 9.2.1): no CSRF check, and handled side by side when pipelined. */
export const isSafeMethod = (method: string): boolean => method === 'GET' || method === 'HEAD' || method === 'OPTIONS';
