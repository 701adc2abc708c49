/**
 * Where the media files of an imported chat are stored. The import links each media line to its
 * file and asks the sink to store it; a sink that cannot answers null, and the message is
 * imported without its media (`media: null`) and listed in the response's warnings.
 */
export interface MediaSink {
  store(file: { fileName: string; mimeType: string; bytes: Buffer }): Promise<{ link: string } | null>;
}

/** No media storage in this deployment yet: every file is reported, none stored. */
export const noMediaSink: MediaSink = {
  async store() {
    return null;
  },
};
