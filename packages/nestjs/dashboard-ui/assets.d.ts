// esbuild bundles the stylesheet the page imports (dashboard.css beside dashboard.js).
declare module '*.css';
