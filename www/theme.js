// Applies the saved theme before the first paint (a classic script, so it runs before the body).
try {
  const t = JSON.parse(localStorage.getItem('weft.pref.theme') || 'null');
  if (t === 'light' || t === 'dark') document.documentElement.dataset.theme = t;
} catch {
  /* nothing saved */
}
