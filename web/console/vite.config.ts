import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

// The build lands in server/console, embedded into the binary (go:embed):
// the console works offline, nothing comes from a CDN.
export default defineConfig({
  plugins: [react()],
  base: "/",
  build: {
    outDir: "../../server/console",
    emptyOutDir: true,
    assetsDir: "assets",
    sourcemap: false,
    chunkSizeWarningLimit: 1024, // one bundle, served from the binary with immutable caching
  },
});
