// Injected at the end of a copy of an HTML report by tests/it/browser.rs (and
// bench/report_screenshots.sh): measures the page as laid out and writes the verdict as JSON
// into the page, and to the frame that holds it, for `chromium --dump-dom` to read.
(function () {
  var de = document.documentElement;
  var out = {
    innerWidth: window.innerWidth,
    scrollWidth: de.scrollWidth,
    scrollHeight: de.scrollHeight,
    texts: 0,
    overlaps: [],
    small: [],
    external: [],
    offscreen: []
  };
  function ownText(e) {
    for (var n = e.firstChild; n; n = n.nextSibling) {
      if (n.nodeType === 3 && n.textContent.trim() !== '') return true;
    }
    return false;
  }
  function shown(e) {
    var r = e.getBoundingClientRect();
    var cs = getComputedStyle(e);
    return r.width > 0 && r.height > 0 && cs.visibility !== 'hidden' && cs.display !== 'none';
  }
  // Every drawn piece of text in the timeline (SVG tooltips are not drawn).
  var boxes = [];
  var chart = document.getElementById('timeline');
  if (chart) {
    chart.querySelectorAll('*').forEach(function (e) {
      if (e.closest('title') || !ownText(e) || !shown(e)) return;
      var r = e.getBoundingClientRect();
      boxes.push({ t: e.textContent.trim().slice(0, 40), r: r });
      var pr = e.closest('.plot');
      if (pr) {
        var p = pr.getBoundingClientRect();
        if (r.left < p.left - 0.5 || r.right > p.right + 0.5) out.offscreen.push(e.textContent.trim().slice(0, 40));
      }
    });
  }
  out.texts = boxes.length;
  var eps = 0.5;
  for (var i = 0; i < boxes.length; i++) {
    for (var j = i + 1; j < boxes.length; j++) {
      var a = boxes[i].r, b = boxes[j].r;
      if (a.left < b.right - eps && b.left < a.right - eps && a.top < b.bottom - eps && b.top < a.bottom - eps) {
        if (out.overlaps.length < 20) out.overlaps.push([boxes[i].t, boxes[j].t]);
      }
    }
  }
  // No drawn text on the page below 12 px.
  document.querySelectorAll('body *').forEach(function (e) {
    if (!ownText(e) || !shown(e) || e.closest('title') || e.closest('#sage-browser-check')) return;
    var px = parseFloat(getComputedStyle(e).fontSize);
    if (px < 12 && out.small.length < 20) out.small.push(e.tagName + ' ' + px + 'px: ' + e.textContent.trim().slice(0, 30));
  });
  // Nothing fetched from anywhere but the file itself.
  performance.getEntriesByType('resource').forEach(function (r) {
    if (!/^(file|data|blob|about):/.test(r.name)) out.external.push(r.name);
  });
  out.ok = out.scrollWidth <= out.innerWidth && out.overlaps.length === 0 && out.small.length === 0 &&
    out.external.length === 0 && out.offscreen.length === 0 && out.texts > 0;
  var text = JSON.stringify(out);
  var pre = document.createElement('pre');
  pre.id = 'sage-browser-check';
  pre.style.display = 'none';
  pre.textContent = text;
  document.body.appendChild(pre);
  if (window.parent !== window) window.parent.postMessage(text, '*');
})();
