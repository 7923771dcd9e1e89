"""Every setting reaches every run, in each of deploy/'s three ways to run the image.

The settings list (settings.DEFAULTS, settings.SECRETS, deploy.INSTANCE) writes the
environment of the compose services, the Docker run launcher and the Kubernetes ConfigMap
and Secret (company_ai/deploy.py). These tests hold the committed files to what the list
writes, and follow each setting to a run worker through the launchers' own code: the
DockerRunLauncher's env_vars as it builds a container's environment, and the
K8sRunLauncher's Job as dagster-k8s builds it from the Helm values.
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import pytest
import yaml
from dagster._core.instance.ref import ConfigurableClassData
from dagster._core.storage.dagster_run import DagsterRun
from dagster._core.utils import parse_env_var
from dagster_docker import DockerRunLauncher
from dagster_k8s import K8sRunLauncher
from dagster_k8s.job import construct_dagster_k8s_job

from company_ai import deploy, settings

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
IMAGE_SERVICES = ("code-server", "webserver", "daemon")


def load(path: str):
    return yaml.safe_load((ROOT / path).read_text())


def test_every_secret_definitions_binds_is_in_the_settings_list():
    source = (ROOT / "company_ai/definitions.py").read_text()
    bound = set(re.findall(r"EnvVar\(\s*\"(\w+)\"", source))
    assert bound <= {*settings.SECRETS, *settings.SECRET_SETTINGS}
    assert set(settings.SECRET_SETTINGS) <= set(settings.DEFAULTS)
    assert not set(settings.SECRETS) & set(settings.DEFAULTS)


def test_the_committed_files_are_what_the_settings_list_writes():
    assert deploy.stale() == [], "run: python -m company_ai.deploy"
    assert deploy.main(["--check"]) == 0


def test_a_new_setting_makes_every_file_stale_until_regenerated(tmp_path, monkeypatch, capsys):
    for f in deploy.FILES:
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_text((ROOT / f).read_text())
    monkeypatch.setitem(settings.DEFAULTS, "COMPANY_AI_NEW_KNOB", "")
    monkeypatch.setattr(deploy, "ROOT", tmp_path)
    assert deploy.stale(tmp_path) == list(deploy.FILES)
    assert deploy.main(["--check"]) == 1
    assert "deploy/compose.yaml is stale" in capsys.readouterr().err
    assert deploy.main([]) == 0
    assert deploy.stale(tmp_path) == []
    for f in deploy.FILES:
        assert "COMPANY_AI_NEW_KNOB" in (tmp_path / f).read_text()


def test_a_filled_in_value_survives_regeneration():
    text = (ROOT / "deploy/helm/settings.yaml").read_text()
    filled = text.replace('COMPANY_AI_TIMEZONE: ""', 'COMPANY_AI_TIMEZONE: "Europe/London"')
    assert filled != text
    assert deploy.render(filled) == filled


def test_a_broken_block_is_a_clear_error():
    with pytest.raises(deploy.DeployFileError, match="unmatched generated blocks"):
        deploy.render("# BEGIN generated: docker-env-vars\n- X\n", "f.yaml")
    with pytest.raises(deploy.DeployFileError, match="no generated block is called 'nope'"):
        deploy.render("# BEGIN generated: nope\n# END generated: nope\n", "f.yaml")


def every_setting_set(monkeypatch) -> dict[str, str]:
    """Each name in the list set to a value of its own, in this process's environment."""
    values = {name: f"value-of-{name}" for name in deploy.names()}
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    return values


# --- Docker: compose hands every setting to the daemon, env_vars hands it to each run ---


def test_every_service_of_the_image_gets_every_setting():
    services = load("deploy/compose.yaml")["services"]
    for name in IMAGE_SERVICES:
        assert set(deploy.names()) <= set(services[name]["environment"]), name


def test_the_docker_run_launcher_hands_every_setting_to_a_run(monkeypatch):
    launcher_config = load("deploy/docker/dagster.yaml")["run_launcher"]
    launcher = ConfigurableClassData(
        launcher_config["module"], launcher_config["class"], yaml.dump(launcher_config["config"])
    ).rehydrate(DockerRunLauncher)
    values = every_setting_set(monkeypatch)
    run = DagsterRun(job_name="brain_job", run_id=str(uuid.uuid4()))
    context = launcher.get_container_context(run)
    # What DockerRunLauncher._launch_container_with_command gives the run's container.
    environment = dict(parse_env_var(v) for v in context.env_vars)
    assert {n: environment.get(n) for n in values} == values
    compose = load("deploy/compose.yaml")
    assert context.networks == [compose["networks"]["default"]["name"]]
    data_volume = f"{compose['volumes']['data']['name']}:{deploy.DATA_DIR}"
    assert context.container_kwargs["volumes"] == [data_volume]


def test_the_docker_instance_is_deploy_dagster_yaml_with_a_run_launcher():
    plain, docker = load("deploy/dagster.yaml"), load("deploy/docker/dagster.yaml")
    docker.pop("run_launcher")
    # The one difference: a launcher that checks its workers can resume a run.
    assert docker["run_monitoring"].pop("max_resume_run_attempts") == 1
    assert plain["run_monitoring"].pop("max_resume_run_attempts") == 0
    assert docker == plain


# --- Kubernetes: one ConfigMap and one Secret, given to every pod and every run ---


def helm_values() -> dict:
    return load("deploy/helm/values.yaml")


def settings_manifests() -> dict[str, dict]:
    docs = yaml.safe_load_all((ROOT / "deploy/helm/settings.yaml").read_text())
    return {d["kind"]: d for d in docs}


def test_the_configmap_and_the_secret_hold_every_setting_once():
    manifests = settings_manifests()
    configmap, secret = manifests["ConfigMap"], manifests["Secret"]
    assert configmap["metadata"]["name"] == deploy.CONFIGMAP
    assert secret["metadata"]["name"] == deploy.SECRET_NAME
    plain, hidden = set(configmap["data"]), set(secret["stringData"]) - {"postgresql-password"}
    assert not plain & hidden
    assert plain | hidden == set(deploy.k8s_names())
    assert hidden == {n for n in deploy.k8s_names() if n in deploy.SECRET}
    assert all(isinstance(v, str) for v in configmap["data"].values())  # a ConfigMap's rule


def test_every_pod_of_the_chart_gets_the_configmap_and_the_secret():
    values = helm_values()
    pods = {
        "webserver": values["dagsterWebserver"],
        "daemon": values["dagsterDaemon"],
        **{d["name"]: d for d in values["dagster-user-deployments"]["deployments"]},
        "run launcher": values["runLauncher"]["config"]["k8sRunLauncher"],
    }
    for name, pod in pods.items():
        assert pod["envConfigMaps"] == [{"name": deploy.CONFIGMAP}], name
        assert pod["envSecrets"] == [{"name": deploy.SECRET_NAME}], name
    for deployment in values["dagster-user-deployments"]["deployments"]:
        assert deployment["includeConfigInLaunchedRuns"] == {"enabled": True}
    assert values["global"]["postgresqlSecretName"] == deploy.SECRET_NAME
    assert values["runLauncher"]["type"] == "K8sRunLauncher"


def test_the_k8s_run_launcher_gives_a_run_every_setting(tmp_path):
    config = helm_values()["runLauncher"]["config"]["k8sRunLauncher"]
    kubeconfig = tmp_path / "kubeconfig"  # never contacted: the Job is only built
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: x\n"
        "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:9'}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: x, context: {cluster: c, user: u}}]\n"
    )
    # The launcher the chart's instance ConfigMap configures from these values.
    launcher = K8sRunLauncher(
        service_account_name="dagster",
        instance_config_map="dagster-instance",
        dagster_home="/opt/dagster/dagster_home",
        load_incluster_config=False,
        kubeconfig_file=str(kubeconfig),
        env_config_maps=[m["name"] for m in config["envConfigMaps"]],
        env_secrets=[s["name"] for s in config["envSecrets"]],
        volumes=config["volumes"],
        volume_mounts=config["volumeMounts"],
        run_k8s_config={"pod_spec_config": config["runK8sConfig"]["podSpecConfig"]},
    )
    run = DagsterRun(job_name="brain_job", run_id=str(uuid.uuid4()))
    context = launcher.get_container_context_for_run(run)
    job = construct_dagster_k8s_job(
        context.get_k8s_job_config(job_image="company-ai:0.1.0", run_launcher=launcher),
        args=["dagster", "api", "execute_run"],
        job_name="dagster-run-test",
        user_defined_k8s_config=context.run_k8s_config,
        component="run_worker",
    )
    pod = job.spec.template.spec
    container = pod.containers[0]
    # What Kubernetes puts in the run's environment: each source's keys (envFrom).
    manifests = settings_manifests()
    sources = {
        ("config_map", deploy.CONFIGMAP): manifests["ConfigMap"]["data"],
        ("secret", deploy.SECRET_NAME): manifests["Secret"]["stringData"],
    }
    environment: set[str] = set()
    for ref in container.env_from:
        if ref.config_map_ref:
            environment |= set(sources[("config_map", ref.config_map_ref.name)])
        if ref.secret_ref:
            environment |= set(sources[("secret", ref.secret_ref.name)])
    assert set(deploy.k8s_names()) <= environment
    assert [m.mount_path for m in container.volume_mounts if m.name == "data"] == [deploy.DATA_DIR]
    assert pod.security_context.run_as_non_root and pod.security_context.run_as_user == 10001


def test_the_chart_runs_the_limits_of_deploy_dagster_yaml():
    plain = load("deploy/dagster.yaml")
    daemon = helm_values()["dagsterDaemon"]
    queued = daemon["runCoordinator"]["config"]["queuedRunCoordinator"]
    runs = plain["concurrency"]["runs"]
    assert queued["maxConcurrentRuns"] == runs["max_concurrent_runs"]
    assert queued["tagConcurrencyLimits"] == runs["tag_concurrency_limits"]
    dequeue = plain["run_coordinator"]["config"]
    assert queued["dequeueUseThreads"] is dequeue["dequeue_use_threads"]
    assert queued["dequeueNumWorkers"] == dequeue["dequeue_num_workers"]
    pools = helm_values()["additionalInstanceConfig"]["concurrency"]["pools"]
    assert pools == plain["concurrency"]["pools"]
    retries = daemon["runRetries"]
    assert retries["maxRetries"] == plain["run_retries"]["max_retries"]
    on_failure = plain["run_retries"]["retry_on_asset_or_op_failure"]
    assert retries["retryOnAssetOrOpFailure"] is on_failure
    assert (
        daemon["runMonitoring"]["startTimeoutSeconds"]
        == (plain["run_monitoring"]["start_timeout_seconds"])
    )
