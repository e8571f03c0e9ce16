// lab/index.html?reset&open=NAME: the full interface, fresh (no tabs of an earlier visit, each
// with its kernel), with notebook NAME open — the first page's way in. JupyterLab's own
// ?reset&path=NAME opens nothing, so this opens NAME once the interface is restored. The build
// loads it in lab/ after kernel_early.js; window.jupyterapp is the app (exposeAppInBrowser).
(() => {
  const wanted = new URLSearchParams(window.location.search).get("open");
  if (!wanted) return;
  const waiting = setInterval(async () => {
    const app = window.jupyterapp;
    if (!app) return;
    clearInterval(waiting);
    await app.restored;
    await app.commands.execute("docmanager:open", { path: wanted });
  }, 50);
})();
