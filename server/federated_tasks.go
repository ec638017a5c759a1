package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/healthagents/healthagents/api"
	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/federated"
	"github.com/healthagents/healthagents/internal/openapi"
	"github.com/healthagents/healthagents/ratelimit"
)

// FederatedTaskRun is one task the service trains: its coordinator and
// what GET /api/v1/federated/tasks/{task} shows of it.
type FederatedTaskRun struct {
	ID          string
	Coordinator FederatedCoordinator
	// TaskFile is the task's definition; nil for the built-in diagnosis
	// task. Run are its run's settings (its own rounds and budget).
	TaskFile *federated.TaskFile
	Run      federated.RunSettings
	// ProofKeys serves the proof keys of a proved run (see
	// FederatedAPI.ProofKeys); nil when the run takes no proofs.
	ProofKeys func(ctx context.Context, shape string) (pk, vk []byte, err error)
	// Source is where the task comes from: "config" (FEDERATED_TASK, or
	// the built-in task) or "api" (POST /api/v1/federated/tasks).
	Source    string
	CreatedAt time.Time // API-created tasks
}

// FederatedTasks are the tasks run beside the default one (FederatedAPI's
// own Coordinator): further FEDERATED_TASK files and the tasks admins
// create over the API. The app implements it.
type FederatedTasks interface {
	// Task returns the task of id, ok false when no such task runs.
	Task(ctx context.Context, id string) (run *FederatedTaskRun, ok bool, err error)
	// Tasks lists them, ordered by id.
	Tasks(ctx context.Context) ([]*FederatedTaskRun, error)
	// CreateTask keeps spec and starts its coordinator; an id already
	// taken is federated.ErrTaskExists.
	CreateTask(ctx context.Context, spec federated.TaskSpec) (*FederatedTaskRun, error)
}

// defaultRun is the default task: the coordinator of FederatedAPI itself.
func (f *FederatedAPI) defaultRun() *FederatedTaskRun {
	task := federated.DefaultTask()
	if f.TaskFile != nil {
		task = f.TaskFile.Task()
	}
	return &FederatedTaskRun{ID: task.Name, Coordinator: f.Coordinator, TaskFile: f.TaskFile, Run: f.Run, ProofKeys: f.ProofKeys, Source: "config"}
}

// taskParam is the {task} path parameter.
var taskParam = openapi.Param{Name: "task", Description: "The task id (GET /api/v1/federated/tasks lists them).", Example: "wdbc/v1"}

const taskAdminAuth = " Needs a key with the federated and keys:admin scopes bound to no organization."

// federatedTaskRoutes are the task resource and, under
// /api/v1/federated/tasks/{task}, the round protocol of each task: every
// route of scoped (the default task's) again with the task in the path.
func (s *srv) federatedTaskRoutes(scoped []route) []route {
	rs := []route{
		{Method: "POST", Path: "/api/v1/federated/tasks", Scope: apikey.ScopeFederated, Class: ratelimit.ClassGeneral, Body: SmallBodyBytes,
			Handler: http.HandlerFunc(s.createFederatedTask), Doc: openapi.Operation{
				OperationID: "createFederatedTask", Tags: []string{"federated"}, Summary: "Create a federated task that runs beside the others",
				Description: "The body is a task in the task-file format (what FEDERATED_TASK names) and the settings of its run; an absent setting takes the service's FEDERATED_* value. " +
					"The task gets its own rounds and privacy budget, is kept in the database and reopened at every start; participants join it through /api/v1/federated/tasks/{task}/... (healthagents participant --task ID). " +
					"400 names the field that is wrong; 409 when a task of that id runs already." + taskAdminAuth,
				Request: api.FederatedTaskRequest{}, Responses: map[int]openapi.Response{http.StatusCreated: {Description: "The task, started.", Body: api.FederatedTask{}}},
				Errors: []int{400, 401, 403, 409, 429, 503}, RateLimited: true, Auth: openapi.AuthRequired,
			}},
		{Method: "GET", Path: "/api/v1/federated/tasks", Scope: apikey.ScopeFederated, Class: ratelimit.ClassGeneral,
			Handler: http.HandlerFunc(s.listFederatedTasks), Doc: openapi.Operation{
				OperationID: "listFederatedTasks", Tags: []string{"federated"}, Summary: "The tasks being trained",
				Description: "Every task as GET /api/v1/federated/tasks/{task} shows it, the default task first and the others ordered by id; default marks the task of the unscoped endpoints (/api/v1/federated/task, /rounds/current, /submit-federated-update). A page of them with offset and limit, total counting them all.",
				QueryParams: wholeListPageParams,
				Responses:   ok("The tasks.", api.FederatedTaskList{}), Errors: []int{401, 403, 429, 503}, RateLimited: true, Auth: openapi.AuthRequired,
			}},
		{Method: "GET", Path: "/api/v1/federated/tasks/{task}", Scope: apikey.ScopeFederated, Class: ratelimit.ClassGeneral,
			Handler: http.HandlerFunc(s.federatedTask), Doc: openapi.Operation{
				OperationID: "getFederatedTaskByID", Tags: []string{"federated"}, Summary: "A task, its run's settings and its privacy budget",
				Description: "What GET /api/v1/federated/task shows for the default task: the definition, the hash, rounds, clip norm, participants and the privacy budget with epsilon spent and remaining.",
				PathParams:  []openapi.Param{taskParam}, Responses: ok("The task.", api.FederatedTask{}), Errors: []int{401, 403, 404, 429, 503}, RateLimited: true, Auth: openapi.AuthRequired,
			}},
	}
	for _, r := range scoped {
		r.Path = "/api/v1/federated/tasks/{task}" + strings.TrimPrefix(r.Path, "/api/v1/federated")
		r.Doc.OperationID += "ForTask"
		r.Doc.Summary += " (of a task)"
		r.Doc.PathParams = append([]openapi.Param{taskParam}, r.Doc.PathParams...)
		if !containsInt(r.Doc.Errors, 404) {
			r.Doc.Errors = append(append([]int(nil), r.Doc.Errors...), 404)
		}
		rs = append(rs, r)
	}
	return rs
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// fedTask returns the federated dependencies and the task the path names
// ({task}; the default task on the unscoped routes), or writes 503 or 404.
func (s *srv) fedTask(w http.ResponseWriter, r *http.Request) (*FederatedAPI, *FederatedTaskRun) {
	f := s.fed(w)
	if f == nil {
		return nil, nil
	}
	id := r.PathValue("task")
	run, ok, err := f.taskRun(r.Context(), id)
	switch {
	case err != nil:
		s.writeError(w, r, fedError(err))
		return nil, nil
	case !ok:
		writeDetail(w, http.StatusNotFound, fmt.Sprintf("Not found: no federated task %q (GET /api/v1/federated/tasks lists them)", id))
		return nil, nil
	}
	return f, run
}

// taskRun is the task of id: the default task for "" or its own id, else
// one of Tasks; ok false when no such task runs.
func (f *FederatedAPI) taskRun(ctx context.Context, id string) (*FederatedTaskRun, bool, error) {
	def := f.defaultRun()
	if id == "" || id == def.ID {
		return def, true, nil
	}
	if f.Tasks == nil {
		return nil, false, nil
	}
	return f.Tasks.Task(ctx, id)
}

// taskOut is the wire form of a task for the caller r.
func taskOut(r *http.Request, run *FederatedTaskRun, isDefault bool) (api.FederatedTask, error) {
	st, err := run.Coordinator.Status(r.Context())
	if err != nil {
		return api.FederatedTask{}, fedError(err)
	}
	task := federated.DefaultTask()
	if run.TaskFile != nil {
		task = run.TaskFile.Task()
	}
	rs := run.Run
	out := api.FederatedTask{
		ID: run.ID, TaskHash: task.Hash(), Definition: taskDefinition(run.TaskFile),
		MaxRounds: rs.Rounds, CurrentRound: st.Round, Phase: string(st.Phase), Stopped: st.Stopped,
		ClipNorm: rs.ClipNorm, MinParticipants: rs.MinParticipants, TargetParticipants: rs.TargetParticipants,
		RoundTimeoutSeconds: int(rs.RoundTimeout.Seconds()), Proofs: run.ProofKeys != nil,
		Default: isDefault, Source: run.Source,
	}
	if !run.CreatedAt.IsZero() {
		at := run.CreatedAt.UTC()
		out.CreatedAt = &at
	}
	if task.Learns() {
		// The learned scaling travels with the model: read it from the
		// latest version (on every replica, from the database).
		h, err := run.Coordinator.History(r.Context())
		if err != nil {
			return api.FederatedTask{}, fedError(err)
		}
		out.LearnedScaling = scalingOut(h[len(h)-1].Scaling)
	}
	if k := requestKey(r); k != nil {
		out.OrganizationID = k.Organization
	}
	if p, ok := run.Coordinator.(privacyReporter); ok {
		ps := p.Privacy()
		out.Privacy = api.FederatedPrivacy{
			Enabled: ps.Enabled, Epsilon: ps.Epsilon, Delta: ps.Delta,
			EpsilonSpent: ps.EpsilonSpent, EpsilonRemaining: ps.EpsilonLeft, RoundsReleased: ps.RoundsReleased, Noise: ps.Noise,
		}
	}
	return out, nil
}

// federatedTask serves GET /api/v1/federated/task (the default task) and
// GET /api/v1/federated/tasks/{task}.
func (s *srv) federatedTask(w http.ResponseWriter, r *http.Request) {
	f, run := s.fedTask(w, r)
	if run == nil {
		return
	}
	out, err := taskOut(r, run, run.ID == f.defaultRun().ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *srv) listFederatedTasks(w http.ResponseWriter, r *http.Request) {
	f := s.fed(w)
	if f == nil {
		return
	}
	def := f.defaultRun()
	runs := []*FederatedTaskRun{def}
	if f.Tasks != nil {
		more, err := f.Tasks.Tasks(r.Context())
		if err != nil {
			s.writeError(w, r, fedError(err))
			return
		}
		runs = append(runs, more...)
	}
	page, err := pageOfWhole(r, runs)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := api.FederatedTaskList{Tasks: make([]api.FederatedTask, 0, len(page)), Total: len(runs)}
	for _, run := range page {
		t, err := taskOut(r, run, run == def)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		out.Tasks = append(out.Tasks, t)
	}
	writeJSON(w, http.StatusOK, out)
}

// settingFields names the FEDERATED_* settings as the task body's fields.
var settingFields = strings.NewReplacer(
	"FEDERATED_DP", "settings.dp", "FEDERATED_EPSILON", "settings.epsilon", "FEDERATED_DELTA", "settings.delta",
	"FEDERATED_CLIP_NORM", "settings.clip_norm", "FEDERATED_ROUNDS", "settings.rounds",
	"FEDERATED_MIN_PARTICIPANTS", "settings.min_participants", "FEDERATED_TARGET_PARTICIPANTS", "settings.target_participants",
	"FEDERATED_ROUND_TIMEOUT", "settings.round_timeout_seconds",
)

// taskSpec checks a POST /api/v1/federated/tasks body: the task file and
// the run's settings over base (the service's). The error is the spec's
// 400, naming the field.
func taskSpec(req api.FederatedTaskRequest, base federated.RunSettings) (*federated.TaskFile, federated.RunSettings, error) {
	invalid := func(field, why string) error {
		return errors.New("Validation error: field '" + field + "' " + why)
	}
	raw, err := json.Marshal(req.Task)
	if err != nil {
		return nil, base, err
	}
	tf, err := federated.ParseTaskFileBytes(raw)
	if err != nil {
		msg := err.Error()
		if i := strings.Index(msg, "task file: "); i >= 0 {
			msg = msg[i+len("task file: "):]
		}
		field, why, _ := strings.Cut(msg, " ")
		return nil, base, invalid("task."+field, why)
	}
	run := base
	run.TaskFile = ""
	if st := req.Settings; st != nil {
		if st.DP != nil {
			run.Privacy = *st.DP
		}
		if st.DPNoise != nil {
			switch *st.DPNoise {
			case federated.NoiseCentral:
				run.Distributed = false
			case federated.NoiseDistributed:
				run.Distributed = true
			default:
				return nil, base, invalid("settings.dp_noise", "must be central or distributed")
			}
		}
		for _, f := range []struct {
			src *float64
			dst *float64
		}{{st.Epsilon, &run.Epsilon}, {st.Delta, &run.Delta}, {st.ClipNorm, &run.ClipNorm}} {
			if f.src != nil {
				*f.dst = *f.src
			}
		}
		for _, f := range []struct {
			src *int
			dst *int
		}{{st.Rounds, &run.Rounds}, {st.MinParticipants, &run.MinParticipants}, {st.TargetParticipants, &run.TargetParticipants}} {
			if f.src != nil {
				*f.dst = *f.src
			}
		}
		if st.RoundTimeoutSeconds != nil {
			if *st.RoundTimeoutSeconds < 1 || *st.RoundTimeoutSeconds > 7*24*3600 {
				return nil, base, invalid("settings.round_timeout_seconds", "must be from 1 to 604800")
			}
			run.RoundTimeout = time.Duration(*st.RoundTimeoutSeconds) * time.Second
		}
	}
	if err := run.Validate(); err != nil {
		var se *federated.SettingError
		if errors.As(err, &se) {
			return nil, base, invalid(settingFields.Replace(se.Setting), settingFields.Replace(se.Why))
		}
		return nil, base, err
	}
	return tf, run, nil
}

func (s *srv) createFederatedTask(w http.ResponseWriter, r *http.Request) {
	caller := requestKey(r)
	if caller == nil || !caller.HasScope(apikey.ScopeKeysAdmin) || caller.Organization != "" {
		writeDetail(w, http.StatusForbidden, detailForbidden)
		return
	}
	f := s.fed(w)
	if f == nil {
		return
	}
	if f.Tasks == nil {
		writeDetail(w, http.StatusServiceUnavailable, detailUnavailable)
		return
	}
	body, err := readBody(w, r, SmallBodyBytes)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var req api.FederatedTaskRequest
	if err := decode(body, &req, "task"); err != nil {
		s.writeError(w, r, err)
		return
	}
	// A misspelt field must not be dropped silently: the task would train
	// without it.
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&api.FederatedTaskRequest{}); err != nil {
		name := strings.TrimPrefix(err.Error(), "json: unknown field ")
		writeDetail(w, http.StatusBadRequest, "Validation error: unknown field "+strings.ReplaceAll(name, `"`, "'"))
		return
	}
	tf, run, err := taskSpec(req, f.Run)
	if err != nil {
		writeDetail(w, http.StatusBadRequest, err.Error())
		return
	}
	if def := f.defaultRun(); tf.ID == def.ID {
		writeDetail(w, http.StatusConflict, fmt.Sprintf("Conflict: the federated task %q runs already (the default task)", tf.ID))
		return
	}
	created, err := f.Tasks.CreateTask(r.Context(), federated.TaskSpec{File: tf, Run: run, CreatedBy: caller.ID, CreatedAt: time.Now()})
	if errors.Is(err, federated.ErrTaskExists) {
		writeDetail(w, http.StatusConflict, fmt.Sprintf("Conflict: the federated task %q runs already", tf.ID))
		return
	}
	if err != nil {
		s.writeError(w, r, fedError(err))
		return
	}
	out, err := taskOut(r, created, false)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, out)
}
