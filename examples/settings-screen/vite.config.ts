import { defineConfig } from 'vite';

// The screen calls the service on its own origin (`/api/...`); `vite dev` and `vite preview` forward those calls to the
// service, as a host app's gateway would, so the service needs no CORS setting for it.
const apiTarget = process.env.SETTINGS_API_URL ?? 'http://localhost:3000';
const proxy = { '/api': { target: apiTarget, changeOrigin: false } };

export default defineConfig({
  server: { proxy },
  preview: { proxy },
  build: { target: 'es2022' },
});
