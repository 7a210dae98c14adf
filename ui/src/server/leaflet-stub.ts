// Stands in for Leaflet in the server bundle: the map is drawn only in the browser, after
// hydration (NearbyMapPage mounts MapView in an effect), so the server never calls into it.
const unavailable = new Proxy(
  {},
  {
    get() {
      throw new Error('Leaflet is not available during server rendering');
    },
  },
);
export default unavailable;
