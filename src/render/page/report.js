(function () {
  var holder = document.getElementById('nsel-data');
  if (!holder) { document.body.setAttribute('data-drawn-bars', '0'); return; }
  var D = JSON.parse(holder.textContent);
  var NS = 'http://www.w3.org/2000/svg';
  var scroller = document.querySelector('#timeline .tl-scroll');
  var svg = document.getElementById('plot');
  var zoomText = document.getElementById('zoomtext');
  var S = D.steps.length, P = D.procs.length;
  var GAP = 2, MINCOL = 12, PAD = 14, BAR = D.row - 9, STRIP = D.row >= 22 ? 4 : 3;
  var INSET = BAR >= 12 ? 2 : 1;
  var height = D.top + D.row * P + 4;
  var maxSlowest = Math.max.apply(null, D.slowest);
  var kLow = MINCOL * 1e6 / maxSlowest, kHigh = 4000 * 1e6 / maxSlowest;
  var measure = document.createElement('canvas').getContext('2d');
  measure.font = '11px system-ui, sans-serif';
  var labelW = D.steps.map(function (s) { return measure.measureText(String(s)).width; });
  var k = 0, kFit = 0, fitted = true, x = [], w = [];

  function el(name, attrs, parent) {
    var e = document.createElementNS(NS, name);
    for (var a in attrs) e.setAttribute(a, attrs[a]);
    parent.appendChild(e);
    return e;
  }
  function tip(e, text) { el('title', {}, e).textContent = text; }
  function ms(ns) { return (ns / 1e6).toFixed(3) + ' ms'; }
  function pct(f) { return (100 * f).toFixed(1) + '%'; }
  function n2(v) { return v.toFixed(2); }
  function widths(kk) { return D.slowest.map(function (s) { return Math.max(MINCOL, kk * s / 1e6); }); }
  function total(kk) {
    var t = 2 * PAD;
    widths(kk).forEach(function (c) { t += c + GAP; });
    return t - GAP;
  }
  function fit() {
    var room = scroller.clientWidth;
    if (total(kLow) >= room) return kLow;
    var lo = kLow, hi = kLow;
    while (total(hi) < room && hi < kHigh) hi *= 2;
    for (var i = 0; i < 40; i++) {
      var m = (lo + hi) / 2;
      if (total(m) <= room) lo = m; else hi = m;
    }
    return lo;
  }
  // The smallest k of 1, 2, 5, 10, 20, 25, 50, ... for which the headers of steps numbered
  // k, 2k, ... leave a gap between each other.
  function every() {
    var steps = [1, 2, 5, 10, 20, 25, 50];
    for (var scale = 100; scale <= 1e9; scale *= 10) steps.push(scale, 2 * scale, 5 * scale);
    for (var j = 0; j < steps.length; j++) {
      var prev = -Infinity, ok = true;
      for (var i = 0; i < S && ok; i++) {
        if (D.steps[i] % steps[j] !== 0) continue;
        var mid = x[i] + w[i] / 2;
        if (mid - labelW[i] / 2 < prev + 8) ok = false; else prev = mid + labelW[i] / 2;
      }
      if (ok) return steps[j];
    }
    return Infinity;
  }

  function draw() {
    var began = performance.now();
    w = widths(k); x = [];
    var at = PAD;
    for (var i = 0; i < S; i++) { x.push(at); at += w[i] + GAP; }
    var width = Math.ceil(at - GAP + PAD);
    svg.textContent = '';
    svg.setAttribute('width', width);
    svg.setAttribute('height', height);
    svg.setAttribute('viewBox', '0 0 ' + width + ' ' + height);
    var g = document.createElementNS(NS, 'g');
    var k2 = every();
    for (i = 0; i < S; i++) {
      el('rect', {'class': i % 2 ? 'col odd' : 'col', x: n2(x[i] - GAP / 2), y: D.head,
                  width: n2(w[i] + GAP), height: height - D.head}, g);
      if (D.steps[i] % k2 === 0) {
        el('text', {'class': 'stephead', x: n2(x[i] + w[i] / 2), y: D.head - 6}, g).textContent =
            D.steps[i];
      }
      var m = D.gpu[i];
      if (D.band && m) {
        var by = D.head + 4, bh = D.band, band = el('g', {'class': 'band'}, g);
        el('rect', {'class': 'idle', x: n2(x[i]), y: by, width: n2(w[i]), height: bh}, band);
        el('rect', {'class': 'busy', x: n2(x[i]), y: n2(by + bh * (1 - m[0])), width: n2(w[i]),
                    height: n2(bh * m[0])}, band);
        if (m[1] !== null) {
          el('rect', {'class': 'comm', x: n2(x[i]), y: n2(by + bh * (1 - m[1])), width: n2(w[i]),
                      height: n2(bh * m[1])}, band);
        }
        tip(band, 'step ' + D.steps[i] + ', median across processes: GPU busy ' + pct(m[0]) +
            ', idle ' + pct(1 - m[0]) + (m[1] !== null ? ', communication ' + pct(m[1]) : '') +
            ' of the step');
      }
    }
    D.procs.forEach(function (p, pi) {
      var y = D.top + D.row * pi + 2;
      p.cells.forEach(function (c) {
        var i = c[0], d = c[1], busy = c[2], comm = c[3], wait = c[4], sh = c[6];
        var bw = w[i] * d / D.slowest[i];
        var cell = el('g', {'class': c[5] ? 'cell straggler' : 'cell'}, g);
        el('rect', {'class': 'stepbar', 'data-worker': p.label, 'data-step': D.steps[i],
                    x: n2(x[i]), y: y, width: n2(bw), height: BAR}, cell);
        // One tooltip for the whole cell (its bar, ranges and strip): fewer nodes, faster zoom.
        var text = p.label + ', step ' + D.steps[i] + ': ' + ms(d) + ' (median ' + ms(D.median[i]) + ')';
        if (c[5]) text += ', straggler';
        if (busy !== null) text += '\nGPU busy ' + ms(busy) + ' (' + pct(busy / d) + '), idle ' + ms(d - busy);
        if (comm !== null) text += '\ncommunication ' + ms(comm) + ' (' + pct(comm / d) + ')';
        if (wait !== null) text += ', of it waiting ' + ms(wait);
        var sx = x[i];
        for (var j = 0; j + 1 < sh.length; j += 2) {
          var rw = bw * sh[j + 1] / d;
          el('rect', {'class': 'share', x: n2(sx), y: y + INSET, width: n2(rw), height: BAR - 2 * INSET,
                      fill: D.colours[sh[j]]}, cell);
          text += '\n' + D.names[sh[j]] + ': ' + ms(sh[j + 1]) + ' (' + pct(sh[j + 1] / d) + ')';
          sx += rw;
        }
        tip(cell, text);
        if (busy !== null) {
          var sy = y + BAR + 1;
          el('rect', {'class': 'idle', x: n2(x[i]), y: sy, width: n2(bw), height: STRIP}, cell);
          el('rect', {'class': 'busy', 'data-worker': p.label, 'data-step': D.steps[i], x: n2(x[i]),
                      y: sy, width: n2(bw * busy / d), height: STRIP}, cell);
          if (comm !== null && comm > 0) {
            el('rect', {'class': 'comm', 'data-worker': p.label, 'data-step': D.steps[i],
                        x: n2(x[i] + bw * (busy - comm) / d), y: sy,
                        width: n2(bw * comm / d), height: STRIP}, cell);
          }
        }
      });
    });
    svg.appendChild(g);
    zoomText.textContent = 'zoom ' + (k / kFit).toFixed(1) + 'x of fit';
    mark();
    // How long one drawing took, layout included: zooming redraws, so it must stay short.
    document.body.setAttribute('data-draw-ms', (performance.now() - began).toFixed(0));
  }

  function mark() {
    var bars = svg.querySelectorAll('rect.stepbar'), strips = svg.querySelectorAll('rect.busy[data-step]');
    var heads = svg.querySelectorAll('text.stephead');
    var size = function (e) { var b = e.getBoundingClientRect(); return b.width > 0 && b.height > 0; };
    var drawnBars = Array.prototype.filter.call(bars, size);
    var drawnStrips = Array.prototype.filter.call(strips, size);
    var comms = Array.prototype.filter.call(svg.querySelectorAll('rect.comm[data-step]'), size);
    var boxes = Array.prototype.map.call(heads, function (t) {
      var b = t.getBoundingClientRect();
      return b.left.toFixed(1) + ' ' + b.right.toFixed(1);
    });
    drawnBars.forEach(function (r) { r.setAttribute('data-drawn', 'yes'); });
    drawnStrips.forEach(function (r) { r.setAttribute('data-drawn', 'yes'); });
    comms.forEach(function (r) { r.setAttribute('data-drawn', 'yes'); });
    heads.forEach(function (t, i) { t.setAttribute('data-box', boxes[i]); });
    document.body.setAttribute('data-drawn-bars', String(drawnBars.length));
    document.body.setAttribute('data-drawn-strips', String(drawnStrips.length));
    scroller.setAttribute('data-widths', scroller.scrollWidth + ' ' + scroller.clientWidth);
    document.querySelectorAll('#timeline .wl[title]').forEach(function (l) {
      var a = l.querySelector('.wa');
      l.setAttribute('data-cut', a && a.scrollWidth > a.clientWidth ? 'yes' : 'no');
    });
    document.body.setAttribute('data-page', document.documentElement.scrollWidth + ' ' + window.innerWidth);
  }

  var pending = null;
  function zoom(factor, clientX) {
    var box = scroller.getBoundingClientRect();
    var view = clientX === undefined ? box.width / 2 : clientX - box.left;
    var px = scroller.scrollLeft + view, i = 0;
    while (i + 1 < S && x[i + 1] <= px) i++;
    var part = (px - x[i]) / (w[i] + GAP);
    k = Math.min(kHigh, Math.max(kFit, k * factor));
    fitted = false;
    draw();
    scroller.scrollLeft = x[i] + part * (w[i] + GAP) - view;
  }
  document.querySelectorAll('#timeline button').forEach(function (b) {
    b.addEventListener('click', function () {
      var how = b.getAttribute('data-zoom');
      if (how === 'fit') { kFit = fit(); k = kFit; fitted = true; draw(); scroller.scrollLeft = 0; }
      else zoom(how === 'in' ? 1.5 : 1 / 1.5);
    });
  });
  scroller.addEventListener('wheel', function (e) {
    if (!e.ctrlKey) return;
    e.preventDefault();
    var factor = Math.exp(-e.deltaY * 0.002), at = e.clientX;
    if (pending) { pending.factor *= factor; pending.at = at; return; }
    pending = {factor: factor, at: at};
    requestAnimationFrame(function () { var z = pending; pending = null; zoom(z.factor, z.at); });
  }, {passive: false});
  window.addEventListener('resize', function () {
    kFit = fit();
    if (fitted) { k = kFit; draw(); }
  });
  kFit = fit();
  k = kFit;
  var asked = /zoom=([0-9.]+)/.exec(location.hash);
  if (asked) { k = Math.min(kHigh, Math.max(kFit, kFit * parseFloat(asked[1]))); fitted = false; }
  draw();
})();
