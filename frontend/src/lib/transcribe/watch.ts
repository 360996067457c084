// Watch folders (Go: app/watchfolders.go): new audio files in one are
// transcribed with its model and options, and the transcript is written
// beside them or into an output folder.
import { endpoint, on } from '../api';
import type { TranscribeOptions } from './api';

export interface WatchFile {
  name: string;
  size: number;
  modTime: string;
  /** done, failed, cancelled, skipped (not audio) or existing (there before). */
  state: string;
  detail?: string;
  finished: string;
}

export interface WatchFolder {
  id: number;
  path: string;
  /** '' = beside the audio. */
  outputDir: string;
  formats: string[];
  options: TranscribeOptions;
  watching: boolean;
  error?: string;
  files: WatchFile[];
}

export interface WatchFolderRequest {
  path: string;
  outputDir: string;
  formats: string[];
  options: Partial<TranscribeOptions>;
}

export const listWatchFolders = endpoint<WatchFolder[]>('WatchFolders', 'GET', '/api/watch-folders');
export const addWatchFolder = endpoint<WatchFolder, [req: WatchFolderRequest]>('AddWatchFolder', 'POST', '/api/watch-folders');
export const removeWatchFolder = endpoint<void, [id: number]>('RemoveWatchFolder', 'DELETE', '/api/watch-folders/{id}');
export const onWatchFolders = (cb: () => void) => on('watch-folders', cb);
