// Live job list for the activity panel: fetched once, then kept current by
// the "job" event (every change publishes the job's full snapshot).
// Jobs already finished when the app opens are not shown; jobs that finish
// while it is open stay until dismissed, except successes, which clear
// themselves after a few seconds.
import { errorMessage, listJobs, onJob, onReconnect, type Job } from './api';

export const jobs = $state<{ list: Job[]; error: string; dismissed: string[] }>({
  list: [],
  error: '',
  dismissed: [],
});

const doneLingerMs = 6000;

function upsert(job: Job) {
  const i = jobs.list.findIndex((j) => j.id === job.id);
  if (i >= 0) jobs.list[i] = job;
  else jobs.list.unshift(job);
  if (job.state === 'done') setTimeout(() => dismissJob(job.id), doneLingerMs);
}

async function refresh(first: boolean) {
  try {
    const list = (await listJobs()) ?? [];
    if (first) {
      for (const j of list) if (j.state !== 'running') dismissJob(j.id);
    }
    // Keep anything an event delivered while the list was loading.
    const known = new Set(list.map((j) => j.id));
    jobs.list = [...jobs.list.filter((j) => !known.has(j.id)), ...list];
    jobs.error = '';
  } catch (err) {
    jobs.error = errorMessage(err);
  }
}

export function dismissJob(id: string) {
  if (!jobs.dismissed.includes(id)) jobs.dismissed.push(id);
}

let started = false;

export function startJobs() {
  if (started) return;
  started = true;
  onJob(upsert);
  onReconnect(() => void refresh(false));
  void refresh(true);
}
