declare module 'core-js-pure/stable/url/index.js' {
  const URLPolyfill: typeof URL;
  export default URLPolyfill;
}
declare module 'core-js-pure/stable/url-search-params/index.js' {
  const URLSearchParamsPolyfill: typeof URLSearchParams;
  export default URLSearchParamsPolyfill;
}
declare module '*.css';
