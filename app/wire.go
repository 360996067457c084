package app

import (
	"hark/app/chat"
	"hark/app/libsvc"
	"hark/app/settings"
	"hark/app/transcription"
	"hark/app/watch"
	"hark/library/store"
	"time"
)

// wire starts each feature in dependency order and keeps it in a field of
// the App: one place says what exists and what needs what, where init()
// registries made the order depend on file names.
func (a *App) wire() error {
	// A crash's leftover API uploads go before anything could add one.
	clearAPIUploads(a)
	lib, err := libsvc.Start(libsvc.Options{DB: a.DB, Log: a.Log, Publish: a.Events.Publish})
	if err != nil {
		return err
	}
	a.lib = lib
	a.OnClose(lib.Close)
	a.chats = chat.Start(chat.Deps{DB: a.DB, Log: a.Log, Publish: a.Events.Publish, Runner: a.Runner, Library: lib.Library(),
		Fits: a.fits})
	a.OnClose(func() error { a.chats.Close(); return nil })
	a.settings = settings.New(settings.Deps{DB: a.DB, Library: lib.Library(), Publish: a.Events.Publish,
		Apply: []func(store.Settings){
			func(st store.Settings) { a.setBackend(st.Backend) },
			func(st store.Settings) { a.Runner.SetIdle(time.Duration(st.IdleUnloadMinutes) * time.Minute) },
			lib.ApplySettings,
		}})
	a.queue = transcription.Start(transcription.Deps{DB: a.DB, Log: a.Log, Publish: a.Events.Publish, Jobs: a.Jobs,
		Runner: a.Runner, Library: lib, DataDir: a.DataDir, Owner: a.lock != nil})
	a.OnClose(func() error { a.queue.Shutdown(); return nil })
	// The watcher hands files to the queue and hears when they finish.
	// Only the instance holding the data folder's lock watches, so two
	// never queue one file twice.
	if a.lock != nil {
		a.watch = watch.Start(watch.Deps{DB: a.DB, Log: a.Log, Publish: a.Events.Publish, Queue: a.queue})
		a.OnClose(func() error { a.watch.Close(); return nil })
	}
	return nil
}

// routeSets are the features' HTTP routes, one per feature file.
func (s *Service) routeSets() []func(*router) {
	return []func(*router){
		s.runnerRoutes,
		s.settingsRoutes,
		s.libraryRoutes,
		s.chatRoutes,
		s.transcribeRoutes,
		s.watchRoutes,
	}
}
