// Sets the theme before the first paint (a classic script, so it runs before the body): the
// saved choice, else the system's, which it follows live until the user picks one. The CSS
// then needs one dark palette, keyed on `data-theme`.
(() => {
  const root = document.documentElement;
  const system = matchMedia('(prefers-color-scheme: dark)');
  let saved = null;
  try {
    saved = JSON.parse(localStorage.getItem('weft.pref.theme') || 'null');
  } catch {
    /* nothing saved */
  }
  if (saved === 'light' || saved === 'dark') {
    root.dataset.theme = saved;
    return;
  }
  const follow = () => {
    if (!root.dataset.chosen) root.dataset.theme = system.matches ? 'dark' : 'light';
  };
  follow();
  system.addEventListener('change', follow);
})();
