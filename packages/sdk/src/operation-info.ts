/** How to call one operation: one entry of generated/operations.ts (scripts/generate.ts makes it from the OpenAPI document). */
export interface OperationInfo {
  method: string;
  path: string;
  pathParams: readonly string[];
  queryParams: readonly string[];
  /** Accepts an Idempotency-Key (the SDK sends one, the same on every retry of a call). */
  idempotent: boolean;
  /**
   * `none`: no body. `fields`: a JSON object whose fields sit beside the path and query parameters in
   * the method's one argument. `json`: any JSON value, given as `body`. `multipart`: form fields and
   * files beside the parameters. `form`: URL-encoded fields beside the parameters. `raw`: bytes or
   * text given as `body`, sent with `contentType`.
   */
  body: 'none' | 'fields' | 'json' | 'multipart' | 'form' | 'raw';
  contentType: string | null;
  /** Multipart fields that carry a file. */
  fileFields: readonly string[];
  /** The success answer: parsed JSON, text, bytes, or nothing (204). */
  response: 'json' | 'text' | 'binary' | 'none';
  /** Answers with a redirect (3xx), which the SDK returns rather than follows. */
  redirects: boolean;
  /** A cursor-paged list: the array field holding the items (the answer's `pagination.nextCursor` leads on). */
  pageItems: string | null;
}
