// The console's graph drawings: zoom buttons, Ctrl + wheel zoom, + and - keys, drag to pan.
// An enhancement only: without this script every drawing is whole, in a region that scrolls.
(function () {
  "use strict";

  var STEP = 1.25;
  var MIN = 0.25;
  var MAX = 4;

  function enhance(region) {
    var svg = region.querySelector("svg");
    if (!svg || !svg.viewBox || !svg.viewBox.baseVal) {
      return;
    }
    var baseWidth = svg.viewBox.baseVal.width;
    var baseHeight = svg.viewBox.baseVal.height;
    var scale = 1;

    function apply(next, anchorX, anchorY) {
      moved = true;
      next = Math.min(MAX, Math.max(MIN, next));
      var ratio = next / scale;
      var x = anchorX === undefined ? region.clientWidth / 2 : anchorX;
      var y = anchorY === undefined ? region.clientHeight / 2 : anchorY;
      var keepLeft = (region.scrollLeft + x) * ratio - x;
      var keepTop = (region.scrollTop + y) * ratio - y;
      scale = next;
      svg.setAttribute("width", String(Math.round(baseWidth * scale)));
      svg.setAttribute("height", String(Math.round(baseHeight * scale)));
      region.scrollLeft = keepLeft;
      region.scrollTop = keepTop;
      label.textContent = Math.round(scale * 100) + "%";
    }

    function button(text, name, act) {
      var made = document.createElement("button");
      made.type = "button";
      made.className = "quiet small";
      made.textContent = text;
      made.setAttribute("aria-label", name);
      made.addEventListener("click", act);
      return made;
    }

    var bar = document.createElement("div");
    bar.className = "zoom";
    var label = document.createElement("span");
    label.className = "hint";
    label.setAttribute("aria-live", "polite");
    label.textContent = "100%";
    bar.appendChild(button("−", "Zoom out", function () { apply(scale / STEP); }));
    bar.appendChild(button("+", "Zoom in", function () { apply(scale * STEP); }));
    bar.appendChild(button("Fit", "Fit the drawing to its box", function () {
      apply(Math.min(1, (region.clientWidth - 2) / baseWidth));
    }));
    bar.appendChild(label);
    var hint = document.createElement("span");
    hint.className = "hint";
    hint.textContent = "Drag to move; Ctrl + wheel or + and − zoom.";
    bar.appendChild(hint);
    region.parentNode.insertBefore(bar, region);
    var moved = false; // until the reader moves or zooms, the middle of the drawing shows
    function centre() {
      if (!moved) {
        region.scrollLeft = (region.scrollWidth - region.clientWidth) / 2;
      }
    }
    centre();
    window.addEventListener("resize", centre);
    region.classList.add("pannable");

    region.addEventListener("wheel", function (event) {
      if (!event.ctrlKey && !event.metaKey) {
        return;
      }
      event.preventDefault();
      var box = region.getBoundingClientRect();
      apply(event.deltaY < 0 ? scale * STEP : scale / STEP,
        event.clientX - box.left, event.clientY - box.top);
    }, { passive: false });

    region.addEventListener("keydown", function (event) {
      if (event.key === "+" || event.key === "=") {
        event.preventDefault();
        apply(scale * STEP);
      } else if (event.key === "-" || event.key === "_") {
        event.preventDefault();
        apply(scale / STEP);
      } else if (event.key === "0") {
        event.preventDefault();
        apply(1);
      }
    });

    var drag = null;
    region.addEventListener("pointerdown", function (event) {
      if (event.button !== 0 || event.pointerType === "touch") {
        return; // a finger scrolls the region natively
      }
      moved = true;
      drag = { x: event.clientX, y: event.clientY, left: region.scrollLeft, top: region.scrollTop };
      region.setPointerCapture(event.pointerId);
      region.classList.add("panning");
    });
    region.addEventListener("pointermove", function (event) {
      if (drag === null) {
        return;
      }
      region.scrollLeft = drag.left - (event.clientX - drag.x);
      region.scrollTop = drag.top - (event.clientY - drag.y);
    });
    function stop(event) {
      if (drag !== null) {
        drag = null;
        region.classList.remove("panning");
        if (region.hasPointerCapture(event.pointerId)) {
          region.releasePointerCapture(event.pointerId);
        }
      }
    }
    region.addEventListener("pointerup", stop);
    region.addEventListener("pointercancel", stop);
  }

  function start() {
    var regions = document.querySelectorAll("[data-drawing]");
    for (var i = 0; i < regions.length; i += 1) {
      enhance(regions[i]);
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
