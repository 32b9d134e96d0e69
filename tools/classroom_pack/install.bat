@echo off
rem speclab classroom pack, Windows: double-click this file, or run install.bat in a
rem terminal. It installs the lessons without internet, then opens JupyterLab; run it
rem again to open JupyterLab again. "set PYTHON=py -3.12" before it chooses the Python;
rem "install.bat --no-launch" installs without opening JupyterLab.
rem This pack serves: @SERVES@
setlocal
cd /d "%~dp0"
set "INSTALLER=speclab\tools\classroom_pack\install.py"
if not exist "%INSTALLER%" goto notapack
if not exist wheels goto notapack
if defined PYTHON goto run

rem the newest Python of the pack that the py launcher knows, else python on PATH
for %%V in (3.13 3.12 3.11) do (
  py -%%V "%INSTALLER%" --check-only >nul 2>&1 && (
    set "PYTHON=py -%%V"
    goto run
  )
)
python -c "import sys" >nul 2>&1 && (
  set "PYTHON=python"
  goto run
)
echo install.bat: no Python found. Install Python @PYTHONS@ from python.org
echo (tick "Add python.exe to PATH"), then run install.bat again.
goto fail

:notapack
echo install.bat: run me in the classroom pack's folder (speclab\ and wheels\ beside me).
goto fail

:run
%PYTHON% "%INSTALLER%" %*
if errorlevel 1 goto fail
exit /b 0

:fail
pause
exit /b 1
