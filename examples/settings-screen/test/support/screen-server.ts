import { existsSync } from 'node:fs';
import { preview } from 'vite';
import { exampleRoot } from './repo';

export interface ScreenServer {
  readonly url: string;
  close(): Promise<void>;
}

/** `vite preview` of the built screen (`dist/`), forwarding `/api` to the service as `vite.config.ts` says. */
export async function serveBuiltScreen(apiUrl: string): Promise<ScreenServer> {
  if (!existsSync(`${exampleRoot}dist/index.html`))
    throw new Error('The screen is not built: run `npm run build` in examples/settings-screen');
  process.env.SETTINGS_API_URL = apiUrl; // read by vite.config.ts
  const server = await preview({ root: exampleRoot, logLevel: 'warn', preview: { host: '127.0.0.1', port: 0, strictPort: false } });
  const url = server.resolvedUrls?.local[0];
  if (!url) throw new Error('vite preview did not report its address');
  return { url, close: () => server.close() };
}
