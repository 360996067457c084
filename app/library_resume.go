package app

import (
	"context"
	"fmt"
	"os"
	"time"

	"hark/library"
)

// HubInfo says whether the Hugging Face Hub (or HF_ENDPOINT) answers, so
// the Library offers Resume only where it can work.
type HubInfo struct {
	Endpoint  string `json:"endpoint"`
	Reachable bool   `json:"reachable"`
	Reason    string `json:"reason,omitempty"`
}

// hubProbeTimeout bounds the reachability check; a hub slower than this
// would make a resumed download crawl anyway.
const hubProbeTimeout = 3 * time.Second

// HubStatus probes the hub.
func (s *Service) HubStatus() (HubInfo, error) {
	p := library.NewPuller(library.PullOptions{Getenv: os.Getenv})
	info := HubInfo{Endpoint: p.Endpoint(), Reachable: true}
	if err := p.Reachable(context.Background(), hubProbeTimeout); err != nil {
		info.Reachable, info.Reason = false, err.Error()
	}
	return info, nil
}

// ResumeModel finishes the download of an Incomplete snapshot: it pulls
// the snapshot's repo at its commit into the cache it lives in, resuming
// any partial blobs with HTTP Range.
func (s *Service) ResumeModel(id string) (Job, error) {
	lib := s.app.library()
	m, err := lib.Resolve(context.Background(), id)
	if err != nil {
		return Job{}, libErr(err)
	}
	if _, err := library.ResumeRef(m); err != nil {
		return Job{}, BadRequest(err)
	}
	switch {
	case m.Downloading:
		return Job{}, Conflict(fmt.Errorf("%s is being downloaded right now", m.ID))
	case !m.Incomplete:
		return Job{}, Conflict(fmt.Errorf("%s is complete; there is nothing to resume", m.ID))
	}
	return s.startPull("Resume "+m.Repo, m.Root, m.Repo, m.Commit), nil
}
