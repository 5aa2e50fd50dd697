/*! A bundler's output: every module inside one immediately invoked function. */
var ts = {}; ((module) => {
"use strict";
var __defProp = Object.defineProperty;
function comparePaths(a, b) {
  if (a === b) { return 0; }
  return a < b ? -1 : 1;
}
var fixId = "fixSomething";
class Emitter {
  emit(event) { return this.handlers.map((h) => h(event)); }
}
})(typeof module !== "undefined" ? module : { exports: ts });
(function () {
  function inner() { return "a body long enough for the skimmer to skip it"; }
})();
