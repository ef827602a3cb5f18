import { defineConfig } from 'vite';

// The screen calls the service on its own origin (`/api/...`); `vite dev` and `vite preview` forward those calls to the
// service, as a host app's gateway would, so the service needs no CORS setting for it.
const apiTarget = process.env.SETTINGS_API_URL ?? 'http://localhost:3000';
const proxy = { '/api': { target: apiTarget, changeOrigin: false } };

// The screen's Content-Security-Policy, as whatever serves it must send it (index.html repeats it in a <meta>, which
// cannot say frame-ancestors): scripts from this origin only (no inline script, no eval), the API on this origin, no
// framing. Styles allow 'unsafe-inline' for index.html's <style> block; Lit's own styles are constructed stylesheets.
const contentSecurityPolicy = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');
const headers = { 'Content-Security-Policy': contentSecurityPolicy, 'X-Content-Type-Options': 'nosniff' };

export default defineConfig({
  server: { proxy, headers },
  preview: { proxy, headers },
  build: { target: 'es2022' },
});
