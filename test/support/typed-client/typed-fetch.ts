import type { components, paths } from '@funding/notification-webhooks/openapi-types';

/** The error body every endpoint answers with. */
export type ApiError = components['schemas']['ErrorResponseDto'];

type Method = 'get' | 'put' | 'post' | 'delete' | 'patch';
export type MethodOf<P extends keyof paths> = { [M in Method]: paths[P][M] extends never | undefined ? never : M }[Method];
type Operation<P extends keyof paths, M extends MethodOf<P>> = NonNullable<paths[P][M]>;

type JsonContent<R> = R extends { content: { 'application/json': infer T } } ? T : undefined;
type SuccessStatus = 200 | 201 | 202 | 204;
type Responses<O> = O extends { responses: infer R } ? R : never;
type SuccessBody<O> = { [S in keyof Responses<O> & SuccessStatus]: JsonContent<Responses<O>[S]> }[keyof Responses<O> & SuccessStatus];
type RequestJson<O> = O extends { requestBody: { content: { 'application/json': infer B } } } ? B : never;
type PathParams<O> = O extends { parameters: { path: infer P } } ? P : never;
type QueryParams<O> = O extends { parameters: { query?: infer Q } } ? Q : never;
type HeaderParams<O> = O extends { parameters: { header?: infer H } } ? H : never;

/** The JSON request body of an operation. */
export type BodyOf<P extends keyof paths, M extends MethodOf<P>> = RequestJson<Operation<P, M>>;
/** The query parameters of an operation. */
export type QueryOf<P extends keyof paths, M extends MethodOf<P>> = NonNullable<QueryParams<Operation<P, M>>>;

/** What a call may carry, exactly as the operation declares it (a `never` field cannot be given). */
export interface CallInput<O> {
  params?: PathParams<O>;
  query?: QueryParams<O>;
  /** Request headers the operation declares (e.g. `Idempotency-Key`). */
  headers?: HeaderParams<O>;
  body?: RequestJson<O>;
}

export type CallResult<O> = { ok: true; status: number; data: SuccessBody<O> } | { ok: false; status: number; error: ApiError };

/** `fetch` typed by the generated `paths`: the path, its parameters, the body and the answer all come from openapi.json. */
export function typedFetch(baseUrl: string, headers: () => Record<string, string>) {
  return async function call<P extends keyof paths, M extends MethodOf<P>>(
    method: M,
    path: P,
    input: CallInput<Operation<P, M>> = {},
  ): Promise<CallResult<Operation<P, M>>> {
    const params = (input.params ?? {}) as Record<string, string | number>;
    const url = new URL(
      String(path).replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(params[name]))),
      baseUrl,
    );
    for (const [key, value] of Object.entries((input.query ?? {}) as Record<string, unknown>)) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    const response = await fetch(url, {
      method: method.toUpperCase(),
      headers: {
        ...headers(),
        ...((input.headers ?? {}) as Record<string, string>),
        // every state-changing request says JSON, with a body or not (the API's cross-site request rule)
        ...(input.body === undefined && method === 'get' ? {} : { 'content-type': 'application/json' }),
      },
      body: input.body === undefined ? undefined : JSON.stringify(input.body),
    });
    const json: unknown = response.status === 204 ? undefined : await response.json();
    return response.ok
      ? { ok: true, status: response.status, data: json as SuccessBody<Operation<P, M>> }
      : { ok: false, status: response.status, error: json as ApiError };
  };
}
