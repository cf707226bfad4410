/** Version of @berth/worker sent in `hello.sdkVersion`; a test keeps it equal to package.json. */
export const SDK_VERSION = '0.1.0';
