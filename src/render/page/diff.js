(function () {
  function box(e) {
    var b = e.getBoundingClientRect();
    return [b.left, b.top, b.right, b.bottom].map(function (v) { return v.toFixed(1); }).join(' ');
  }
  // data-end: the label's end is shown whole (not clipped), inside the label's box.
  document.querySelectorAll('#ranks .rk .rl').forEach(function (l) {
    var a = l.querySelector('.ra'), z = l.querySelector('.rz');
    var outer = l.getBoundingClientRect(), end = z.getBoundingClientRect();
    l.setAttribute('data-box', box(l));
    l.setAttribute('data-cut', a.scrollWidth > a.clientWidth ? 'yes' : 'no');
    l.setAttribute('data-end', end.width > 0 && z.scrollWidth <= z.clientWidth &&
                   end.left >= outer.left - 0.5 &&
                   end.right <= outer.right + 0.5 ? 'yes' : 'no');
  });
  document.querySelectorAll('#ranks svg.rb[data-zero]').forEach(function (s) { s.setAttribute('data-box', box(s)); });
  document.querySelectorAll('#steps text.xtick').forEach(function (t) { t.setAttribute('data-box', box(t)); });
  document.querySelectorAll('#ranks rect.bar').forEach(function (r) { r.setAttribute('data-box', box(r)); });
  document.body.setAttribute('data-page', document.documentElement.scrollWidth + ' ' + window.innerWidth);
  document.querySelectorAll('table.sortable').forEach(function (table) {
    table.querySelectorAll('th').forEach(function (th, column) {
      var down = false;
      th.addEventListener('click', function () {
        var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
        down = !down;
        rows.sort(function (a, b) {
          var x = a.cells[column], y = b.cells[column], r;
          if (x.hasAttribute('data-sort') && y.hasAttribute('data-sort')) {
            r = parseFloat(x.getAttribute('data-sort')) - parseFloat(y.getAttribute('data-sort'));
          } else {
            r = x.textContent.localeCompare(y.textContent);
          }
          return down ? -r : r;
        });
        rows.forEach(function (row) { body.appendChild(row); });
      });
    });
  });
})();
